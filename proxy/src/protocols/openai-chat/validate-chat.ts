import { Errors, GatewayError } from '@gateway/shared';

/**
 * Checks a chat-completion body against DESIGN §3 without copying it: unknown fields pass through
 * to the provider, known ones must have the documented type and range. The first problem found
 * is reported with its field in `param`, as OpenAI does.
 */
export interface ValidChatRequest {
  model: string;
  stream: boolean;
  clientWantsUsage: boolean;
  /** The larger of max_completion_tokens and max_tokens, else null. */
  maxTokens: number | null;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function invalid(param: string, message: string): GatewayError {
  return Errors.invalidField(param, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function validateChatRequest(body: unknown): ValidChatRequest {
  if (!isObject(body)) throw invalid('body', 'The body must be a JSON object.');

  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalid('model', '`model` is required and must be a non-empty string.');
  if (model.length > 256) throw invalid('model', '`model` is too long.');

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', '`messages` is required and must be a non-empty array.');
  for (let i = 0; i < messages.length; i++) checkMessage(messages[i], i);

  const stream = body.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw invalid('stream', '`stream` must be a boolean.');

  checkNumber(body, 'temperature', 0, 2);
  checkNumber(body, 'top_p', 0, 1);
  const maxTokens = checkPositiveInt(body, 'max_tokens');
  const maxCompletionTokens = checkPositiveInt(body, 'max_completion_tokens');
  checkPositiveInt(body, 'n');

  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== 'string') {
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) throw invalid('stop', '`stop` must be a string or an array of strings.');
  }

  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools) || !tools.every(isObject)) throw invalid('tools', '`tools` must be an array of tool definitions.');
  }

  let clientWantsUsage = false;
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!isObject(streamOptions)) throw invalid('stream_options', '`stream_options` must be an object.');
    const includeUsage = streamOptions.include_usage;
    if (includeUsage !== undefined && typeof includeUsage !== 'boolean') throw invalid('stream_options.include_usage', '`stream_options.include_usage` must be a boolean.');
    clientWantsUsage = includeUsage === true;
  }

  // Both sent: the larger is what the request may use, so it is what caps and reservations see.
  const limit = maxCompletionTokens !== null && maxTokens !== null ? Math.max(maxCompletionTokens, maxTokens) : (maxCompletionTokens ?? maxTokens);
  return { model, stream: stream === true, clientWantsUsage, maxTokens: limit };
}

function checkMessage(message: unknown, i: number): void {
  const at = `messages[${i}]`;
  if (!isObject(message)) throw invalid(at, `\`${at}\` must be an object with \`role\` and \`content\`.`);
  const role = message.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw invalid(`${at}.role`, `\`${at}.role\` must be one of system, developer, user, assistant, tool.`);
  }
  const content = message.content;
  if (typeof content === 'string') return;
  if (Array.isArray(content)) {
    for (let j = 0; j < content.length; j++) {
      const part = content[j];
      if (!isObject(part) || typeof part.type !== 'string') throw invalid(`${at}.content[${j}]`, `\`${at}.content[${j}]\` must be a content part with a \`type\`.`);
    }
    return;
  }
  if ((content === null || content === undefined) && role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) return;
  throw invalid(`${at}.content`, `\`${at}.content\` must be a string or an array of content parts.`);
}

function checkNumber(body: Record<string, unknown>, field: string, min: number, max: number): void {
  const value = body[field];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(field, `\`${field}\` must be a number from ${min} to ${max}.`);
  }
}

function checkPositiveInt(body: Record<string, unknown>, field: string): number | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw invalid(field, `\`${field}\` must be a positive integer.`);
  return value;
}
