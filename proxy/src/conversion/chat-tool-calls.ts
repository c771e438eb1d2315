import { invalid, isObject } from './json-fields.js';

/**
 * The internal request's tool calls and tool results as every provider-side pair reads them
 * (chat-anthropic, chat-converse): a call's id, name and arguments (OpenAI carries them as JSON
 * text, the providers take an object), a result's call id, each refused 400 at its path.
 */

export interface ToolCallRead {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** An assistant message's tool call at `at` (`messages[2].tool_calls[0]`). */
export function readToolCall(call: unknown, at: string): ToolCallRead {
  if (!isObject(call) || !isObject(call.function)) throw invalid(at, `\`${at}\` must be a function tool call.`);
  if (typeof call.id !== 'string' || call.id === '') throw invalid(`${at}.id`, `\`${at}.id\` must be a non-empty string.`);
  const fn = call.function;
  if (typeof fn.name !== 'string' || fn.name === '') throw invalid(`${at}.function.name`, `\`${at}.function.name\` must be a non-empty string.`);
  return { id: call.id, name: fn.name, input: parseArguments(fn.arguments, `${at}.function.arguments`) };
}

/** A call's arguments as an object; none (or blank) is `{}`. */
function parseArguments(text: unknown, at: string): Record<string, unknown> {
  if (text === undefined || text === null || (typeof text === 'string' && text.trim() === '')) return {};
  if (typeof text !== 'string') throw invalid(at, `\`${at}\` must be a string of JSON.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(at, `\`${at}\` is not valid JSON.`);
  }
  if (!isObject(parsed)) throw invalid(at, `\`${at}\` must be a JSON object.`);
  return parsed;
}

/** The call a `tool` message at `at` answers. */
export function toolResultId(message: Record<string, unknown>, at: string): string {
  const id = message.tool_call_id;
  if (typeof id !== 'string' || id === '') throw invalid(`${at}.tool_call_id`, `\`${at}.tool_call_id\` must be a non-empty string.`);
  return id;
}
