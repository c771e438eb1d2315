import { GatewayError } from '@gateway/shared';
import type { ParsedRequest } from '../protocol.js';
import { scanMessagesRequest } from './scan-request.js';
import { checkDepth, invalid, isObject, optionalNumber, present, requireObject, requireString, unsupported } from './request-fields.js';
import { cacheControlOf, carried, carry } from './cache-hints.js';
import { translateMessages, translateSystem } from './translate-messages.js';
import { translateTools } from './translate-tools.js';
import type { ChatCompletionBody, ChatResponseFormat } from '../../request/openai-chat.js';

/**
 * An Anthropic Messages body, validated and translated into the internal request (an OpenAI Chat
 * Completions body). What the internal request cannot carry is refused with the field named,
 * never silently dropped, except a hint that does not change the answer (`service_tier`); prompt
 * cache breakpoints are carried for the adapters that cache prompts (cache-hints.ts).
 * docs/endpoints.md lists the mapping.
 */
export interface MessagesRequest extends ParsedRequest {
  /**
   * The client's own body, validated. Kept for a provider that speaks Messages natively: it may
   * be sent as it came (`anthropicRaw`) instead of the translation in `chat`.
   */
  anthropic: Readonly<Record<string, unknown>>;
  anthropicRaw: Buffer;
}

/** `create` is POST /v1/messages; `count` is count_tokens, where max_tokens is not asked for. */
export type MessagesPurpose = 'create' | 'count';

/** Fields of Anthropic's API this gateway reads; any other is refused. */
const FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k',
  'tools', 'tool_choice', 'thinking', 'service_tier', 'cache_control', 'output_config',
]);

/** Why a known Anthropic field is refused, when it is not obvious. */
const ANTHROPIC_ONLY: Record<string, string> = {
  container: 'containers live inside Anthropic\'s API',
  mcp_servers: 'MCP servers are called by Anthropic\'s API itself',
  context_management: 'context editing happens inside Anthropic\'s API',
  inference_geo: 'the gateway cannot promise where another provider runs the model',
  speed: 'a speed mode is Anthropic\'s own',
};

const MAX_MODEL = 256;
const MAX_USER_ID = 256;

/**
 * `nativeRoute(model)`: every provider of the model's route takes the body as it came. Then a body
 * the translation refuses still goes, read only for what the gateway needs (scan-request.ts), its
 * refusal kept as `untranslatable` for a step that would need the translation after all.
 */
export function parseMessagesRequest(body: unknown, raw: Buffer, purpose: MessagesPurpose = 'create', nativeRoute?: (model: string) => boolean): MessagesRequest {
  try {
    return translateRequest(body, raw, purpose);
  } catch (err) {
    if (nativeRoute === undefined || !(err instanceof GatewayError) || !isObject(body) || typeof body.model !== 'string' || !nativeRoute(body.model)) throw err;
    const maxTokens = maxTokensOf(body.max_tokens, purpose);
    if (present(body.stream) && typeof body.stream !== 'boolean') throw invalid('stream', 'must be a boolean');
    const { chat, model, stream } = scanMessagesRequest(body, maxTokens);
    const user = endUserOf(body.metadata);
    if (user !== null) chat.user = user;
    return { chat, raw: null, model, stream, wantsUsage: true, maxTokens, anthropic: body, anthropicRaw: raw, untranslatable: err };
  }
}

function translateRequest(body: unknown, raw: Buffer, purpose: MessagesPurpose): MessagesRequest {
  if (!isObject(body)) throw invalid('body', 'The body must be a JSON object.');
  for (const field of Object.keys(body)) {
    if (!FIELDS.has(field)) throw unsupported(field, ANTHROPIC_ONLY[field] ?? 'not a Messages API field this gateway serves');
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
  if (present(body.top_k)) throw unsupported('top_k', 'the internal request (OpenAI Chat Completions) has no top_k; use top_p or temperature');

  const stop = stopSequences(body.stop_sequences);
  if (stop !== null) chat.stop = stop;
  const user = userId(body.metadata);
  if (user !== null) chat.user = user;
  Object.assign(chat, translateTools(body.tools, body.tool_choice));
  checkThinking(body.thinking);
  const format = outputFormat(body.output_config);
  if (format !== null) chat.response_format = format;
  checkHints(body, chat);

  return { chat, raw: null, model, stream: stream === true, wantsUsage: true, maxTokens, anthropic: body, anthropicRaw: raw };
}

function maxTokensOf(value: unknown, purpose: MessagesPurpose): number | null {
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
function endUserOf(value: unknown): string | null {
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

/** Extended thinking has no form in the internal request; turning it off asks for nothing. */
function checkThinking(value: unknown): void {
  if (!present(value)) return;
  const thinking = requireObject(value, 'thinking');
  if (thinking.type === 'disabled') return;
  if (typeof thinking.type !== 'string') throw invalid('thinking.type', 'Field required');
  throw unsupported('thinking', `thinking of type \`${thinking.type}\` cannot be carried to the providers behind it; leave it out or send {"type":"disabled"}`);
}

/** output_config.format (JSON outputs) is OpenAI's json_schema response format; effort has no equivalent. */
function outputFormat(value: unknown): ChatResponseFormat | null {
  if (!present(value)) return null;
  const config = requireObject(value, 'output_config');
  for (const field of Object.keys(config)) {
    if (field !== 'format' && present(config[field])) throw unsupported(`output_config.${field}`, 'only output_config.format can be carried');
  }
  if (!present(config.format)) return null;
  const format = requireObject(config.format, 'output_config.format');
  if (format.type !== 'json_schema') throw invalid('output_config.format.type', "must be 'json_schema'");
  const schema = requireObject(format.schema, 'output_config.format.schema');
  checkDepth(schema, 'output_config.format.schema');
  return { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };
}

/**
 * Hints that change where or how cheaply a request runs, never its answer. `service_tier` is
 * checked, then dropped. The request's own `cache_control` (Anthropic's automatic caching, whose
 * breakpoint is the prompt's last block) is carried on the last message, as a block's is
 * (cache-hints.ts).
 */
function checkHints(body: Record<string, unknown>, chat: ChatCompletionBody): void {
  const tier = body.service_tier;
  if (present(tier) && tier !== 'auto' && tier !== 'standard_only') throw invalid('service_tier', "must be 'auto' or 'standard_only'");
  const auto = cacheControlOf(body, '');
  const last = chat.messages[chat.messages.length - 1];
  if (auto !== undefined && last !== undefined && carried(last) === undefined) carry(last, auto);
}
