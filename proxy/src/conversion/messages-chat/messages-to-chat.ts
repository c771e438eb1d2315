import type { MessagesPurpose, MessagesRequest } from '../../protocols/anthropic-messages/parse-request.js';
import { checkDepth, invalid, isObject, optionalNumber, present, requireObject, requireString, unsupported } from '../../protocols/anthropic-messages/request-fields.js';
import { cacheControlOf, carried, carry } from './cache-hints.js';
import { translateMessages, translateSystem } from './translate-messages.js';
import { translateTools } from './translate-tools.js';
import type { ChatCompletionBody, ChatResponseFormat } from '../../request/openai-chat.js';

/**
 * An Anthropic Messages body, validated and translated into the internal request: the request
 * half of the messages-chat pair (messages-chat.ts). docs/endpoints.md lists the mapping.
 */
/** Fields of Anthropic's API the translation reads; any other only tunes the answer and is dropped, unless refused below. */
const FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p',
  'tools', 'tool_choice', 'thinking', 'cache_control', 'output_config',
]);

/** Anthropic fields whose loss would change the answer, or break a promise made to the client: refused, with why. */
const ANTHROPIC_ONLY: Record<string, string> = {
  container: 'containers live inside Anthropic\'s API',
  mcp_servers: 'MCP servers are called by Anthropic\'s API itself',
  inference_geo: 'the gateway cannot promise where another provider runs the model',
};

const MAX_MODEL = 256;
const MAX_USER_ID = 256;

export function toChatRequest(body: unknown, raw: Buffer, purpose: MessagesPurpose): MessagesRequest {
  if (!isObject(body)) throw invalid('body', 'The body must be a JSON object.');
  const dropped: string[] = [];
  for (const field of Object.keys(body)) {
    if (FIELDS.has(field) || !present(body[field])) continue;
    const why = ANTHROPIC_ONLY[field];
    if (why !== undefined) throw unsupported(field, why);
    dropped.push(field);
  }
  const model = requireString(body.model, 'model', { nonEmpty: true, max: MAX_MODEL });
  const maxTokens = maxTokensOf(body.max_tokens, purpose);

  const messages = translateMessages(body.messages);
  const system = translateSystem(body.system);
  const chat: ChatCompletionBody = { model, messages: system === null ? messages : [system, ...messages] };
  if (maxTokens !== null) chat.max_tokens = maxTokens;

  const stream = body.stream;
  if (present(stream) && typeof stream !== 'boolean') throw invalid('stream', 'must be a boolean');
  if (stream === true) {
    chat.stream = true;
    // The stream's final message_delta reports usage: the provider must send its usage chunk.
    chat.stream_options = { include_usage: true };
  }
  // Anthropic's range is 0-1, inside OpenAI's 0-2: the value means the same and goes as it is.
  const temperature = optionalNumber(body, 'temperature', 0, 1);
  if (temperature !== undefined) chat.temperature = temperature;
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) chat.top_p = topP;

  const stop = stopSequences(body.stop_sequences);
  if (stop !== null) chat.stop = stop;
  const user = userId(body.metadata);
  if (user !== null) chat.user = user;
  Object.assign(chat, translateTools(body.tools, body.tool_choice));
  const thinking = thinkingEffort(body.thinking, maxTokens);
  const output = outputConfig(body.output_config, dropped);
  // The effort asked for decides; thinking switched on without one is the budget's.
  const effort = thinking === 'off' ? null : (output.effort ?? thinking);
  if (effort !== null) chat.reasoning_effort = effort;
  if (output.format !== null) chat.response_format = output.format;
  checkHints(body, chat);

  const parsed: MessagesRequest = { chat, raw: null, model, stream: stream === true, wantsUsage: true, maxTokens, anthropic: body, anthropicRaw: raw };
  if (dropped.length > 0) parsed.dropped = dropped;
  return parsed;
}

export function maxTokensOf(value: unknown, purpose: MessagesPurpose): number | null {
  if (!present(value)) {
    if (purpose === 'count') return null;
    throw invalid('max_tokens', 'Field required');
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid('max_tokens', 'must be an integer of at least 1');
  return value;
}

function stopSequences(value: unknown): string[] | null {
  if (!present(value)) return null;
  if (!Array.isArray(value)) throw invalid('stop_sequences', 'must be an array of strings');
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string' || value[i] === '') throw invalid(`stop_sequences.${i}`, 'must be a non-empty string');
  }
  return value.length === 0 ? null : (value as string[]);
}

function userId(value: unknown): string | null {
  if (!present(value)) return null;
  const metadata = requireObject(value, 'metadata');
  if (!present(metadata.user_id)) return null;
  return endUser(requireString(metadata.user_id, 'metadata.user_id', { max: MAX_USER_ID }));
}

/** The end user of a body the translation refused: read as `userId` does, never refusing. */
export function endUserOf(value: unknown): string | null {
  if (!isObject(value) || typeof value.user_id !== 'string' || value.user_id.length > MAX_USER_ID) return null;
  return endUser(value.user_id);
}

/**
 * Claude Code sends `user_id` as a JSON object in a string (`{"device_id":…,"account_uuid":…,
 * "session_id":…}`): its session is the end user, and the device and account ids stay out of the
 * records. Any other string is the end user as it is.
 */
function endUser(userId: string): string {
  if (!userId.startsWith('{')) return userId;
  try {
    const parsed: unknown = JSON.parse(userId);
    if (isObject(parsed) && typeof parsed.session_id === 'string' && parsed.session_id !== '') return parsed.session_id;
  } catch {
    // Not JSON after all: the string is the id.
  }
  return userId;
}

type Effort = 'low' | 'medium' | 'high';

/**
 * Extended thinking as the reasoning effort of the internal request: `enabled` by its budget
 * (up to 4,095 tokens low, up to 16,383 medium, more high), `adaptive` medium unless
 * output_config.effort says otherwise; 'off' when the client turned thinking off.
 */
function thinkingEffort(value: unknown, maxTokens: number | null): Effort | 'off' | null {
  if (!present(value)) return null;
  const thinking = requireObject(value, 'thinking');
  switch (thinking.type) {
    case 'disabled':
      return 'off';
    case 'adaptive':
      return 'medium';
    case 'enabled': {
      const budget = thinking.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1024) throw invalid('thinking.budget_tokens', 'must be an integer of at least 1024');
      if (maxTokens !== null && budget >= maxTokens) throw invalid('thinking.budget_tokens', 'must be less than max_tokens');
      return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
    }
    default:
      if (typeof thinking.type !== 'string') throw invalid('thinking.type', 'Field required');
      throw invalid('thinking.type', "must be one of 'enabled', 'adaptive', 'disabled'");
  }
}

const EFFORTS: Record<string, Effort> = { low: 'low', medium: 'medium', high: 'high', max: 'high' };

/**
 * output_config: `format` (JSON outputs) is OpenAI's json_schema response format, `effort` the
 * reasoning effort (`max` as high, the most OpenAI-shaped providers take); any other field only
 * tunes the answer and is dropped.
 */
function outputConfig(value: unknown, dropped: string[]): { format: ChatResponseFormat | null; effort: Effort | null } {
  if (!present(value)) return { format: null, effort: null };
  const config = requireObject(value, 'output_config');
  for (const field of Object.keys(config)) {
    if (field !== 'format' && field !== 'effort' && present(config[field])) dropped.push(`output_config.${field}`);
  }
  let effort: Effort | null = null;
  if (present(config.effort)) {
    const asked = config.effort;
    effort = typeof asked === 'string' && Object.hasOwn(EFFORTS, asked) ? (EFFORTS[asked] as Effort) : null;
    if (effort === null) throw invalid('output_config.effort', "must be one of 'low', 'medium', 'high', 'max'");
  }
  if (!present(config.format)) return { format: null, effort };
  const format = requireObject(config.format, 'output_config.format');
  if (format.type !== 'json_schema') throw invalid('output_config.format.type', "must be 'json_schema'");
  const schema = requireObject(format.schema, 'output_config.format.schema');
  checkDepth(schema, 'output_config.format.schema');
  return { format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } }, effort };
}

/**
 * The request's own `cache_control` (Anthropic's automatic caching, whose breakpoint is the
 * prompt's last block) is carried on the last message, as a block's is (cache-hints.ts).
 */
function checkHints(body: Record<string, unknown>, chat: ChatCompletionBody): void {
  const auto = cacheControlOf(body, '');
  const last = chat.messages[chat.messages.length - 1];
  if (auto !== undefined && last !== undefined && carried(last) === undefined) carry(last, auto);
}
