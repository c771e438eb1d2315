import { clip, invalid, isObject, isSet } from './checks.js';
import type { ChatFunction, ChatTool, ChatToolChoice } from '../../request/openai-chat.js';

/**
 * Function tools and the tool choice, from the Responses shape (flat: `{type, name, description,
 * parameters, strict}`) to the Chat Completions one (nested under `function`). Built-in tools
 * (web search, file search, computer use, code interpreter, image generation, MCP, shell…) run on
 * OpenAI's side and are refused: the gateway can only forward functions the client runs itself.
 */
export interface Tools {
  /** Chat Completions tools (empty when none). */
  chat: ChatTool[];
  /** The tools as the Response echoes them. */
  echo: Record<string, unknown>[];
}

export function parseTools(value: unknown): Tools {
  if (!isSet(value)) return { chat: [], echo: [] };
  if (!Array.isArray(value)) throw invalid('tools', '`tools` must be a list of function tools.');
  const chat: ChatTool[] = [];
  const echo: Record<string, unknown>[] = [];
  for (let i = 0; i < value.length; i++) {
    const tool: unknown = value[i];
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(at, `\`${at}\` must be a tool definition (an object).`);
    if (tool.type !== 'function') {
      if (typeof tool.type !== 'string') throw invalid(`${at}.type`, `\`${at}.type\` must be "function".`);
      throw invalid(`${at}.type`, `The built-in tool \`${clip(tool.type)}\` is not supported: the gateway serves function tools only (type "function").`);
    }
    const name = tool.name;
    if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw invalid(`${at}.name`, `\`${at}.name\` must be a non-empty string of at most 128 characters.`);
    const description = tool.description;
    if (isSet(description) && typeof description !== 'string') throw invalid(`${at}.description`, `\`${at}.description\` must be a string.`);
    const parameters = tool.parameters;
    if (isSet(parameters) && !isObject(parameters)) throw invalid(`${at}.parameters`, `\`${at}.parameters\` must be a JSON Schema object.`);
    const strict = tool.strict;
    if (isSet(strict) && typeof strict !== 'boolean') throw invalid(`${at}.strict`, `\`${at}.strict\` must be a boolean.`);
    const fn: ChatFunction = { name };
    if (isSet(description)) fn.description = description as string;
    if (isSet(parameters)) fn.parameters = parameters as Record<string, unknown>;
    if (isSet(strict)) fn.strict = strict as boolean;
    chat.push({ type: 'function', function: fn });
    echo.push({ type: 'function', name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? null });
  }
  return { chat, echo };
}

export interface ToolChoice {
  /** The chat `tool_choice`, or undefined when not set. */
  chat: ChatToolChoice | undefined;
  /** As the Response echoes it. */
  echo: unknown;
}

export function parseToolChoice(value: unknown): ToolChoice {
  if (!isSet(value)) return { chat: undefined, echo: 'auto' };
  if (value === 'auto' || value === 'none' || value === 'required') return { chat: value, echo: value };
  if (isObject(value)) {
    if (value.type === 'function') {
      if (typeof value.name !== 'string' || value.name.length === 0) throw invalid('tool_choice.name', '`tool_choice.name` must name a function tool.');
      return { chat: { type: 'function', function: { name: value.name } }, echo: { type: 'function', name: value.name } };
    }
    if (typeof value.type === 'string') {
      throw invalid('tool_choice', `\`tool_choice\` of type \`${clip(value.type)}\` is not supported: use "auto", "none", "required" or {"type": "function", "name": …}.`);
    }
  }
  throw invalid('tool_choice', '`tool_choice` must be "auto", "none", "required" or {"type": "function", "name": …}.');
}
