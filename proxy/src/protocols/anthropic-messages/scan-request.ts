import type { ChatCompletionBody, ChatFunction, ChatMessage, ChatTool } from '../../request/openai-chat.js';
import { isObject, requireString } from './request-fields.js';

/**
 * A Messages body read for what the gateway itself needs when it goes to its provider as it came
 * (a native route) but the translation could not carry it: a field or block the gateway does not
 * know, `thinking`, `output_config.effort`, a system message among the messages. The provider
 * judges the body; the gateway reads only the model, the output limit, the stream flag and the
 * texts (each message's text, tool calls and results, and the text of blocks it does not know),
 * as the internal request its token estimate and guardrails read. Nothing of it is sent.
 */
const MAX_MODEL = 256;

export interface ScannedMessages {
  chat: ChatCompletionBody;
  model: string;
  stream: boolean;
}

export function scanMessagesRequest(body: Record<string, unknown>, maxTokens: number | null): ScannedMessages {
  const model = requireString(body.model, 'model', { nonEmpty: true, max: MAX_MODEL });
  const stream = body.stream === true;
  const messages: ChatMessage[] = [];
  const system = textOf(body.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isObject(message)) continue;
      const role = message.role === 'assistant' ? 'assistant' : message.role === 'system' ? 'system' : 'user';
      messages.push({ role, content: textOf(message.content) });
    }
  }
  const chat: ChatCompletionBody = { model, messages };
  if (maxTokens !== null) chat.max_tokens = maxTokens;
  if (stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  const tools = toolsOf(body.tools);
  if (tools.length > 0) chat.tools = tools;
  return { chat, model, stream };
}

/** Fields whose strings are not text a model reads (ids, media, signatures). */
const NOT_TEXT = new Set(['type', 'id', 'tool_use_id', 'signature', 'data', 'media_type', 'cache_control', 'citations', 'source']);

/** Every text string in a content value, joined by newlines; a block's `input` as its JSON. */
function textOf(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  // Deeper than any real content: what is past it is not read (the provider still gets it).
  if (depth > 16 || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) return value.map((v) => textOf(v, depth + 1)).filter((t) => t !== '').join('\n');
  const pieces: string[] = [];
  for (const [field, inner] of Object.entries(value as Record<string, unknown>)) {
    if (NOT_TEXT.has(field)) continue;
    if (field === 'input' && typeof inner === 'object' && inner !== null) pieces.push(jsonOf(inner));
    else {
      const text = textOf(inner, depth + 1);
      if (text !== '') pieces.push(text);
    }
  }
  return pieces.join('\n');
}

/** A tool input as the text a model reads; one nested past what a stack holds is left unread (the provider judges it). */
function jsonOf(value: object): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '';
  }
}

/** Tools as the estimate counts them: name, description and schema (a server tool has its type as its name). */
function toolsOf(value: unknown): ChatTool[] {
  if (!Array.isArray(value)) return [];
  const out: ChatTool[] = [];
  for (const tool of value) {
    if (!isObject(tool)) continue;
    const name = typeof tool.name === 'string' ? tool.name : typeof tool.type === 'string' ? tool.type : 'tool';
    const fn: ChatFunction = { name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (isObject(tool.input_schema)) fn.parameters = tool.input_schema;
    out.push({ type: 'function', function: fn });
  }
  return out;
}
