import type { ChatCompletionBody, ChatMessage } from '../../request/openai-chat.js';
import { invalid, isObject } from './checks.js';

/**
 * A Responses body read for what the gateway itself needs when it goes to a provider's own
 * Responses API as it came (a native route) but the translation could not carry it (built-in
 * tools, `client_metadata`, `previous_response_id`, a field OpenAI added since): the model, the
 * output limit, the stream flag, and the texts of the instructions and input items for the token
 * estimate and the guardrails. The provider judges the rest; nothing of this is sent.
 */
export interface ScannedResponses {
  chat: ChatCompletionBody;
  model: string;
  stream: boolean;
  maxTokens: number | null;
}

export function scanResponsesRequest(body: Record<string, unknown>): ScannedResponses {
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalid('model', '`model` is required and must be a non-empty string.');
  if (model.length > 256) throw invalid('model', '`model` is too long.');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalid('stream', '`stream` must be a boolean.');
  const stream = body.stream === true;
  const limit = body.max_output_tokens;
  const maxTokens = typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? limit : null;
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  else if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (!isObject(item)) continue;
      const text = textOf(item);
      if (text === '') continue;
      const role = item.role === 'assistant' || item.type === 'function_call' ? 'assistant' : item.role === 'system' || item.role === 'developer' ? 'system' : 'user';
      messages.push({ role, content: text });
    }
  }
  const chat: ChatCompletionBody = { model, messages };
  if (maxTokens !== null) chat.max_tokens = maxTokens;
  if (stream) chat.stream = true;
  return { chat, model, stream, maxTokens };
}

/** Fields whose strings are no text a model reads (ids, media, signatures, encrypted reasoning). */
const NOT_TEXT = new Set(['type', 'id', 'call_id', 'role', 'status', 'encrypted_content', 'image_url', 'file_data', 'file_id', 'detail', 'signature']);

function textOf(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (depth > 16 || value === null || typeof value !== 'object') return '';
  const inner = Array.isArray(value) ? value : Object.entries(value as Record<string, unknown>).filter(([field]) => !NOT_TEXT.has(field)).map(([, v]) => v);
  return inner.map((v) => textOf(v, depth + 1)).filter((t) => t !== '').join('\n');
}
