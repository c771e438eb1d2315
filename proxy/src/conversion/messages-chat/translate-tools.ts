import { cacheControlOf, carry } from './cache-hints.js';
import { checkDepth, invalid, isObject, present, requireObject, requireString, unsupported } from '../../protocols/anthropic-messages/request-fields.js';

/**
 * Anthropic's `tools` and `tool_choice` as OpenAI function tools: `input_schema` is the function's
 * `parameters`; tool_choice auto / any / tool / none is auto / required / a named function / none,
 * and `disable_parallel_tool_use` is `parallel_tool_calls: false`. Server tools (web search, code
 * execution, …) run inside Anthropic's API and cannot be offered to another provider: refused.
 * A tool's breakpoint goes with it (cache-hints.ts).
 */
const NAME = /^[a-zA-Z0-9_-]{1,128}$/;

export function translateTools(toolsValue: unknown, choiceValue: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names: string[] = [];
  if (present(toolsValue)) {
    if (!Array.isArray(toolsValue)) throw invalid('tools', 'must be an array of tool definitions');
    const tools: Record<string, unknown>[] = [];
    for (let i = 0; i < toolsValue.length; i++) {
      const at = `tools.${i}`;
      const tool = requireObject(toolsValue[i], at);
      if (present(tool.type) && tool.type !== 'custom') {
        throw unsupported(`${at}.type`, `\`${String(tool.type)}\` is a tool Anthropic runs itself; only client tools (name, description, input_schema) can be routed`);
      }
      const name = requireString(tool.name, `${at}.name`);
      if (!NAME.test(name)) throw invalid(`${at}.name`, 'must be 1 to 128 letters, digits, underscores or hyphens');
      if (names.includes(name)) throw invalid(`${at}.name`, `tool names must be unique (\`${name}\` is given twice)`);
      names.push(name);
      const fn: Record<string, unknown> = { name };
      if (present(tool.description)) fn.description = requireString(tool.description, `${at}.description`);
      fn.parameters = requireObject(tool.input_schema, `${at}.input_schema`);
      checkDepth(fn.parameters, `${at}.input_schema`);
      if (present(tool.strict)) {
        if (typeof tool.strict !== 'boolean') throw invalid(`${at}.strict`, 'must be a boolean');
        fn.strict = tool.strict;
      }
      tools.push(carry({ type: 'function', function: fn }, cacheControlOf(tool, at)));
    }
    if (tools.length > 0) out.tools = tools;
  }
  if (!present(choiceValue)) return out;
  if (!isObject(choiceValue)) throw invalid('tool_choice', 'must be an object with a `type`');
  const type = choiceValue.type;
  const disableParallel = choiceValue.disable_parallel_tool_use;
  if (present(disableParallel) && typeof disableParallel !== 'boolean') throw invalid('tool_choice.disable_parallel_tool_use', 'must be a boolean');
  let choice: unknown;
  if (type === 'auto') choice = 'auto';
  else if (type === 'none') choice = 'none';
  else if (type === 'any') choice = 'required';
  else if (type === 'tool') {
    const name = requireString(choiceValue.name, 'tool_choice.name');
    if (!names.includes(name)) throw invalid('tool_choice.name', `names no tool of \`tools\` (\`${name}\`)`);
    choice = { type: 'function', function: { name } };
  } else throw invalid('tool_choice.type', "must be one of 'auto', 'any', 'tool', 'none'");
  if (names.length === 0) {
    if (type === 'any') throw invalid('tool_choice', "'any' needs at least one tool in `tools`");
    // auto or none with no tools: nothing to choose from, and OpenAI refuses a choice without tools.
    return out;
  }
  out.tool_choice = choice;
  if (disableParallel === true && type !== 'none') out.parallel_tool_calls = false;
  return out;
}
