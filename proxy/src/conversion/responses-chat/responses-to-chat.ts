import type { ResponsesRequest } from '../../protocols/openai-responses/parse-request.js';
import { clip, invalid, isObject, isSet, optionalBoolean, optionalNumber, optionalPositiveInt, optionalString } from '../../protocols/openai-responses/checks.js';
import { inputMessages } from './input-items.js';
import { isResponseId } from './response-object.js';
import { parseToolChoice, ToolSet } from './tools.js';
import type { ChatCompletionBody, ChatMessage } from '../../request/openai-chat.js';


/**
 * A Responses API body, validated and translated into the internal request: the request half of
 * the responses-chat pair (responses-chat.ts). docs/endpoints.md lists the mapping.
 */
const STATELESS = 'This gateway keeps responses (`store`, `previous_response_id`), not conversations, prompts or items by reference.';

/** Parameters the translation reads (mapped, passed on, or checked: see docs/endpoints.md); any other is dropped, unless refused below. */
const ACCEPTED = new Set([
  'model', 'input', 'instructions', 'stream', 'stream_options', 'max_output_tokens', 'temperature', 'top_p', 'tools', 'tool_choice',
  'parallel_tool_calls', 'text', 'reasoning', 'user', 'metadata', 'store', 'include', 'background', 'truncation', 'service_tier',
  'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'top_logprobs', 'previous_response_id',
]);

/** Parameters refused whenever set: each needs state the gateway does not keep (it keeps responses, not conversations or prompts). */
const REFUSED: Record<string, string> = {
  conversation: `\`conversation\` is not supported. ${STATELESS} Send the whole conversation in \`input\`.`,
  prompt: `\`prompt\` (stored prompt templates) is not supported. ${STATELESS} Send the instructions and input themselves.`,
};

/** `include` values the gateway can honour: reasoning items carry their `encrypted_content` whether asked or not (response-object.ts). */
const INCLUDABLE = new Set(['reasoning.encrypted_content']);

const REASONING_EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

export function toChatRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw invalid('body', 'The body must be a JSON object.');
  const dropped: string[] = [];
  for (const field of Object.keys(body)) {
    if (ACCEPTED.has(field) || !isSet(body[field])) continue;
    if (Object.hasOwn(REFUSED, field)) throw invalid(field, REFUSED[field] as string);
    dropped.push(field);
  }

  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalid('model', '`model` is required and must be a non-empty string.');
  if (model.length > 256) throw invalid('model', '`model` is too long.');

  checkStateless(body);
  const stream = optionalBoolean(body, 'stream') === true;
  if (isSet(body.stream_options)) {
    if (!isObject(body.stream_options)) throw invalid('stream_options', '`stream_options` must be an object.');
    // Obfuscation pads events against length side channels; the gateway's events carry none.
    optionalBoolean(body.stream_options, 'include_obfuscation', 'stream_options.include_obfuscation');
  }

  const instructions = optionalString(body, 'instructions');
  const tools = new ToolSet();
  tools.addAll(body.tools, 'tools');
  const messages: ChatMessage[] = inputMessages(body.input, tools);
  if (instructions !== null) messages.unshift({ role: 'system', content: instructions });

  const chat: ChatCompletionBody = { model, messages };
  if (stream) {
    chat.stream = true;
    // The Response reports usage at the end of every stream.
    chat.stream_options = { include_usage: true };
  }
  const maxOutputTokens = optionalPositiveInt(body, 'max_output_tokens');
  if (maxOutputTokens !== null) chat.max_tokens = maxOutputTokens;
  const temperature = optionalNumber(body, 'temperature', 0, 2);
  if (temperature !== null) chat.temperature = temperature;
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP !== null) chat.top_p = topP;

  const toolChoice = parseToolChoice(body.tool_choice, tools);
  const parallel = optionalBoolean(body, 'parallel_tool_calls');
  // Chat Completions refuses tool_choice and parallel_tool_calls without tools.
  if (tools.chat.length > 0) {
    chat.tools = tools.chat;
    if (toolChoice.chat !== undefined) chat.tool_choice = toolChoice.chat;
    if (parallel !== null) chat.parallel_tool_calls = parallel;
  }

  const text = parseText(body.text, chat, dropped);
  const reasoning = parseReasoning(body.reasoning, chat, dropped);

  const echo: Record<string, unknown> = {
    instructions,
    max_output_tokens: maxOutputTokens,
    metadata: parseMetadata(body.metadata),
    parallel_tool_calls: parallel ?? true,
    previous_response_id: null,
    reasoning,
    store: false,
    temperature,
    text,
    tool_choice: toolChoice.echo,
    tools: tools.echo,
    top_p: topP,
    truncation: 'disabled',
  };
  for (const field of ['user', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier']) {
    const value = optionalString(body, field);
    if (value !== null) {
      chat[field] = value;
      echo[field] = value;
    }
  }

  const previous = optionalString(body, 'previous_response_id');
  if (previous !== null && !isResponseId(previous)) throw invalid('previous_response_id', '`previous_response_id` must be the id of a response (resp_…).');
  const inputItems = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : (body.input as unknown[]);
  const parsed: ResponsesRequest = { chat, raw: null, model, stream, wantsUsage: true, maxTokens: maxOutputTokens, echo, store: optionalBoolean(body, 'store'), previousResponseId: previous, inputItems };
  if (tools.origins.size > 0) parsed.toolOrigins = tools.origins;
  if (dropped.length > 0) parsed.dropped = dropped;
  return parsed;
}

/** Parameters that ask for state or background work: accepted only at their stateless values. */
function checkStateless(body: Record<string, unknown>): void {
  if (optionalBoolean(body, 'background') === true) throw invalid('background', '`background: true` is not supported: responses are answered in the request, streamed or whole.');
  const truncation = body.truncation;
  if (isSet(truncation) && truncation !== 'disabled') {
    if (truncation === 'auto') throw invalid('truncation', '`truncation: "auto"` is not supported: the gateway does not drop input items; send `"disabled"` or leave it out.');
    throw invalid('truncation', '`truncation` must be "disabled".');
  }
  const topLogprobs = body.top_logprobs;
  if (isSet(topLogprobs) && topLogprobs !== 0) throw invalid('top_logprobs', '`top_logprobs` is not supported: responses carry no log probabilities.');
  const include = body.include;
  if (isSet(include)) {
    if (!Array.isArray(include)) throw invalid('include', '`include` must be a list of strings.');
    for (let i = 0; i < include.length; i++) {
      const value: unknown = include[i];
      if (typeof value !== 'string') throw invalid(`include[${i}]`, `\`include[${i}]\` must be a string.`);
      if (!INCLUDABLE.has(value)) throw invalid('include', `\`include\` value \`${clip(value)}\` is not supported: only reasoning.encrypted_content is accepted.`);
    }
  }
}

/** `text.format` → `response_format`; `text.verbosity` → `verbosity`. Returns the echo. */
function parseText(value: unknown, chat: Record<string, unknown>, dropped: string[]): Record<string, unknown> {
  if (!isSet(value)) return { format: { type: 'text' } };
  if (!isObject(value)) throw invalid('text', '`text` must be an object.');
  for (const field of Object.keys(value)) {
    if (field !== 'format' && field !== 'verbosity' && isSet(value[field])) dropped.push(`text.${clip(field)}`);
  }
  const echo: Record<string, unknown> = { format: { type: 'text' } };
  const verbosity = value.verbosity;
  if (isSet(verbosity)) {
    if (verbosity !== 'low' && verbosity !== 'medium' && verbosity !== 'high') throw invalid('text.verbosity', '`text.verbosity` must be low, medium or high.');
    chat.verbosity = verbosity;
    echo.verbosity = verbosity;
  }
  const format = value.format;
  if (!isSet(format)) return echo;
  if (!isObject(format)) throw invalid('text.format', '`text.format` must be an object with a `type`.');
  switch (format.type) {
    case 'text':
      return echo;
    case 'json_object':
      chat.response_format = { type: 'json_object' };
      echo.format = { type: 'json_object' };
      return echo;
    case 'json_schema': {
      const name = format.name;
      if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw invalid('text.format.name', '`text.format.name` must be 1 to 64 letters, digits, underscores or dashes.');
      if (!isObject(format.schema)) throw invalid('text.format.schema', '`text.format.schema` must be a JSON Schema object.');
      const description = optionalString(format, 'description', 'text.format.description');
      const strict = optionalBoolean(format, 'strict', 'text.format.strict');
      const schema: Record<string, unknown> = { name, schema: format.schema };
      if (description !== null) schema.description = description;
      if (strict !== null) schema.strict = strict;
      chat.response_format = { type: 'json_schema', json_schema: schema };
      echo.format = { type: 'json_schema', ...schema, description, strict };
      return echo;
    }
    default:
      throw invalid('text.format.type', '`text.format.type` must be text, json_object or json_schema.');
  }
}

/**
 * `reasoning.effort` → `reasoning_effort`, which reasoning models behind Chat Completions read
 * (and the Anthropic translation makes extended thinking of). `summary` decides whether the
 * reasoning a provider returns is shown as the reasoning items' summary. Any other field
 * (`context`, which earlier turns' reasoning the model sees) is dropped.
 */
function parseReasoning(value: unknown, chat: Record<string, unknown>, dropped: string[]): Record<string, unknown> | null {
  if (!isSet(value)) return null;
  if (!isObject(value)) throw invalid('reasoning', '`reasoning` must be an object.');
  for (const field of Object.keys(value)) {
    if (field !== 'effort' && field !== 'summary' && field !== 'generate_summary' && isSet(value[field])) dropped.push(`reasoning.${clip(field)}`);
  }
  const effort = value.effort;
  if (isSet(effort)) {
    if (typeof effort !== 'string' || !REASONING_EFFORTS.has(effort)) throw invalid('reasoning.effort', '`reasoning.effort` must be none, minimal, low, medium, high or xhigh.');
    chat.reasoning_effort = effort;
  }
  const summary = value.summary ?? value.generate_summary;
  if (isSet(summary) && summary !== 'auto' && summary !== 'concise' && summary !== 'detailed') throw invalid('reasoning.summary', '`reasoning.summary` must be auto, concise or detailed.');
  return { effort: effort ?? null, summary: summary ?? null };
}

/** Up to 16 string pairs, as OpenAI allows; echoed in the Response, never sent to the provider. */
function parseMetadata(value: unknown): Record<string, string> {
  if (!isSet(value)) return {};
  if (!isObject(value)) throw invalid('metadata', '`metadata` must be an object of strings.');
  const entries = Object.entries(value);
  if (entries.length > 16) throw invalid('metadata', '`metadata` may hold at most 16 pairs.');
  for (const [key, text] of entries) {
    if (key.length > 64 || typeof text !== 'string' || text.length > 512) throw invalid('metadata', '`metadata` keys must be at most 64 characters and values strings of at most 512.');
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a key.
  return Object.fromEntries(entries) as Record<string, string>;
}
