import { exampleArguments } from './mock-arguments.js';
import { isObject, tokenize } from './mock-tokens.js';

/**
 * What the mock answers to a chat body, decided once and rendered whole or streamed:
 *
 * - a tool call when tools are given, `tool_choice` is not "none" and the last message is not a
 *   tool result, and either `tool_choice` names a function (that one), is "required" (the first
 *   tool the last user message names, else the first tool), or is "auto"/absent and the last user
 *   message names a tool (contains its name): one call with arguments from its schema
 *   (mock-arguments.ts), finish_reason "tool_calls";
 * - otherwise text: after a tool result, "The <name> tool returned: <result>"; else "This is the
 *   gateway's built-in mock provider. You said: <the last user message>", its text parts joined
 *   and images shown as "[image]". Cut before the first `stop` string (finish_reason "stop").
 *
 * `max_completion_tokens` (else `max_tokens`) caps the output in mock tokens (mock-tokens.ts);
 * an answer cut by it ends with finish_reason "length". A tool call counts one token plus its
 * arguments' tokens, and is cut in its arguments, as a real provider's is.
 */
export type MockFinish = 'stop' | 'length' | 'tool_calls';

export interface MockToolCall {
  id: string;
  name: string;
  /** The arguments JSON in tokens (cut short when the answer hit max_tokens). */
  argumentTokens: string[];
}

export interface MockAnswer {
  /** The reply text in tokens; empty for a tool call. */
  contentTokens: string[];
  toolCall: MockToolCall | null;
  outputTokens: number;
  finish: MockFinish;
}

/** Longest part of the user's message the mock repeats, in characters. */
const ECHO_CHARS = 2_000;

export function mockAnswer(body: Readonly<Record<string, unknown>>): MockAnswer {
  const messages = (Array.isArray(body.messages) ? body.messages : []).filter(isObject);
  const limit = maxTokens(body);
  const tool = chooseTool(body, messages);
  if (tool !== null) {
    let argumentTokens = tokenize(exampleArguments(tool.parameters));
    let finish: MockFinish = 'tool_calls';
    if (limit !== null && 1 + argumentTokens.length > limit) {
      argumentTokens = argumentTokens.slice(0, limit - 1);
      finish = 'length';
    }
    const toolCall = { id: `call_mock_${messages.length}_0`, name: tool.name, argumentTokens };
    return { contentTokens: [], toolCall, outputTokens: 1 + argumentTokens.length, finish };
  }
  let text = replyText(messages);
  let finish: MockFinish = 'stop';
  const cut = firstStop(text, body.stop);
  if (cut !== -1) text = text.slice(0, cut);
  let contentTokens = tokenize(text);
  if (limit !== null && contentTokens.length > limit) {
    contentTokens = contentTokens.slice(0, limit);
    finish = 'length';
  }
  return { contentTokens, toolCall: null, outputTokens: contentTokens.length, finish };
}

function maxTokens(body: Readonly<Record<string, unknown>>): number | null {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

interface ToolDefinition {
  name: string;
  parameters: unknown;
}

function chooseTool(body: Readonly<Record<string, unknown>>, messages: Record<string, unknown>[]): ToolDefinition | null {
  const tools: ToolDefinition[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (isObject(t) && isObject(t.function) && typeof t.function.name === 'string') tools.push({ name: t.function.name, parameters: t.function.parameters });
  }
  const choice = body.tool_choice;
  if (tools.length === 0 || choice === 'none' || messages.at(-1)?.role === 'tool') return null;
  if (isObject(choice)) {
    const wanted = isObject(choice.function) ? choice.function.name : undefined;
    return tools.find((t) => t.name === wanted) ?? null;
  }
  const said = lastUserText(messages);
  const named = tools.find((t) => said.includes(t.name)) ?? null;
  return choice === 'required' ? (named ?? (tools[0] as ToolDefinition)) : named;
}

function replyText(messages: Record<string, unknown>[]): string {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const name = toolName(messages, last.tool_call_id);
    return `The ${name === null ? '' : `${name} `}tool returned: ${clip(partsText(last.content))}`.trimEnd();
  }
  return `This is the gateway's built-in mock provider. You said: ${clip(lastUserText(messages))}`.trimEnd();
}

/** The function an earlier assistant message called with this id. */
function toolName(messages: Record<string, unknown>[], id: unknown): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = messages[i]?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const call of calls) {
      if (isObject(call) && call.id === id && isObject(call.function) && typeof call.function.name === 'string') return call.function.name;
    }
  }
  return null;
}

function lastUserText(messages: Record<string, unknown>[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Record<string, unknown>;
    if (m.role === 'user') return partsText(m.content);
  }
  return '';
}

/** String content as it is; parts as their text, images as "[image]", other parts by type. */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') out.push(part.text);
    else if (part.type === 'image_url') out.push('[image]');
    else if (typeof part.type === 'string') out.push(`[${part.type}]`);
  }
  return out.join(' ');
}

function clip(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= ECHO_CHARS) return trimmed;
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(trimmed.charAt(ECHO_CHARS - 1)) ? ECHO_CHARS - 1 : ECHO_CHARS;
  return trimmed.slice(0, end);
}

function firstStop(text: string, stop: unknown): number {
  const sequences = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [];
  let first = -1;
  for (const s of sequences) {
    if (typeof s !== 'string' || s.length === 0) continue;
    const at = text.indexOf(s);
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  return first;
}
