import { clip, invalid, isObject, isSet } from '../../protocols/openai-responses/checks.js';
import type { ChatFunction, ChatTool, ChatToolChoice } from '../../request/openai-chat.js';

/**
 * Function tools and the tool choice, from the Responses shape (flat: `{type, name, description,
 * parameters, strict}`) to the Chat Completions one (nested under `function`). Two shapes the
 * Codex CLI sends map too: a `namespace` groups tools (its members reach Chat Completions as
 * `<namespace>__<name>`, except the default namespace `functions`, whose members keep their own
 * names), and a `custom` tool, which takes free text, becomes a function of one string argument
 * `input` (its grammar described to the model). Each chat name remembers where it came from
 * (`origins`), so the answer's calls go back as the client declared them. Built-in tools (web
 * search, file search, computer use, code interpreter, image generation, MCP, shell…) run on
 * OpenAI's side and are refused: the gateway can only forward tools the client runs itself.
 */
export interface ToolOrigin {
  /** The tool's own name. */
  name: string;
  /** Its namespace, when not the default one. */
  namespace?: string;
  /** A free-text tool: its calls are `custom_tool_call` items, their input the `input` argument. */
  custom: boolean;
}

/** The default namespace: its members are plain function tools. */
const DEFAULT_NAMESPACE = 'functions';
const NAMESPACE_SEPARATOR = '__';

export class ToolSet {
  /** Chat Completions tools (empty when none). */
  readonly chat: ChatTool[] = [];
  /** The tools as the Response echoes them. */
  readonly echo: Record<string, unknown>[] = [];
  /** Chat tool name → the tool the client declared; only names that differ or are custom are kept. */
  readonly origins = new Map<string, ToolOrigin>();
  private readonly names = new Set<string>();

  /** The chat name of a tool the client names (in a call it replays), by its namespace. */
  chatName(name: string, namespace: unknown): string {
    return typeof namespace === 'string' && namespace !== '' && namespace !== DEFAULT_NAMESPACE ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
  }

  /** Tool definitions (the request's `tools`, or an input item's), each at `at[i]`. */
  addAll(value: unknown, at: string): void {
    if (!isSet(value)) return;
    if (!Array.isArray(value)) throw invalid(at, `\`${at}\` must be a list of function tools.`);
    for (let i = 0; i < value.length; i++) this.add(value[i], `${at}[${i}]`, undefined);
  }

  private add(tool: unknown, at: string, namespace: string | undefined): void {
    if (!isObject(tool)) throw invalid(at, `\`${at}\` must be a tool definition (an object).`);
    switch (tool.type) {
      case 'function':
        return this.addFunction(tool, at, namespace);
      case 'custom':
        return this.addCustom(tool, at, namespace);
      case 'namespace': {
        if (namespace !== undefined) throw invalid(`${at}.type`, `\`${at}\`: a namespace cannot hold another namespace.`);
        const name = toolName(tool, at);
        if (!Array.isArray(tool.tools)) throw invalid(`${at}.tools`, `\`${at}.tools\` must be a list of tools.`);
        for (let i = 0; i < tool.tools.length; i++) this.add(tool.tools[i], `${at}.tools[${i}]`, name === DEFAULT_NAMESPACE ? undefined : name);
        return;
      }
      default:
        if (typeof tool.type !== 'string') throw invalid(`${at}.type`, `\`${at}.type\` must be "function".`);
        throw invalid(`${at}.type`, `The built-in tool \`${clip(tool.type)}\` is not supported: the gateway serves tools the client runs (function, custom, namespace).`);
    }
  }

  private addFunction(tool: Record<string, unknown>, at: string, namespace: string | undefined): void {
    const name = toolName(tool, at);
    const description = tool.description;
    if (isSet(description) && typeof description !== 'string') throw invalid(`${at}.description`, `\`${at}.description\` must be a string.`);
    const parameters = tool.parameters;
    if (isSet(parameters) && !isObject(parameters)) throw invalid(`${at}.parameters`, `\`${at}.parameters\` must be a JSON Schema object.`);
    const strict = tool.strict;
    if (isSet(strict) && typeof strict !== 'boolean') throw invalid(`${at}.strict`, `\`${at}.strict\` must be a boolean.`);
    const fn: ChatFunction = { name: this.claim(name, namespace, false, at) };
    if (isSet(description)) fn.description = description as string;
    if (isSet(parameters)) fn.parameters = parameters as Record<string, unknown>;
    if (isSet(strict)) fn.strict = strict as boolean;
    this.chat.push({ type: 'function', function: fn });
    this.echo.push({ type: 'function', name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? null, ...(namespace === undefined ? {} : { namespace }) });
  }

  private addCustom(tool: Record<string, unknown>, at: string, namespace: string | undefined): void {
    const name = toolName(tool, at);
    const description = tool.description;
    if (isSet(description) && typeof description !== 'string') throw invalid(`${at}.description`, `\`${at}.description\` must be a string.`);
    const format = tool.format;
    if (isSet(format) && !isObject(format)) throw invalid(`${at}.format`, `\`${at}.format\` must be an object.`);
    const grammar = isObject(format) && format.type === 'grammar' && typeof format.definition === 'string' ? format : null;
    const inputHelp = grammar === null ? 'The tool\'s input, as free text.' : `The tool's input, as text matching this ${typeof grammar.syntax === 'string' ? grammar.syntax : ''} grammar:\n${grammar.definition as string}`;
    const fn: ChatFunction = {
      name: this.claim(name, namespace, true, at),
      parameters: { type: 'object', properties: { input: { type: 'string', description: inputHelp } }, required: ['input'], additionalProperties: false },
    };
    if (typeof description === 'string') fn.description = description;
    this.chat.push({ type: 'function', function: fn });
    this.echo.push({ type: 'custom', name, description: description ?? null, ...(isObject(format) ? { format } : {}), ...(namespace === undefined ? {} : { namespace }) });
  }

  /** The tool's chat name, unique in the request. */
  private claim(name: string, namespace: string | undefined, custom: boolean, at: string): string {
    const chatName = this.chatName(name, namespace);
    if (chatName.length > 128) throw invalid(`${at}.name`, `\`${at}.name\` is too long with its namespace.`);
    if (this.names.has(chatName)) throw invalid(`${at}.name`, `\`${at}.name\`: the tool \`${clip(chatName)}\` is declared twice.`);
    this.names.add(chatName);
    if (custom || namespace !== undefined) this.origins.set(chatName, namespace === undefined ? { name, custom } : { name, namespace, custom });
    return chatName;
  }
}

function toolName(tool: Record<string, unknown>, at: string): string {
  const name = tool.name;
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw invalid(`${at}.name`, `\`${at}.name\` must be a non-empty string of at most 128 characters.`);
  return name;
}

export interface ToolChoice {
  /** The chat `tool_choice`, or undefined when not set. */
  chat: ChatToolChoice | undefined;
  /** As the Response echoes it. */
  echo: unknown;
}

export function parseToolChoice(value: unknown, tools: ToolSet): ToolChoice {
  if (!isSet(value)) return { chat: undefined, echo: 'auto' };
  if (value === 'auto' || value === 'none' || value === 'required') return { chat: value, echo: value };
  if (isObject(value)) {
    if (value.type === 'function' || value.type === 'custom') {
      if (typeof value.name !== 'string' || value.name.length === 0) throw invalid('tool_choice.name', `\`tool_choice.name\` must name a ${value.type} tool.`);
      return { chat: { type: 'function', function: { name: tools.chatName(value.name, value.namespace) } }, echo: value };
    }
    if (typeof value.type === 'string') {
      throw invalid('tool_choice', `\`tool_choice\` of type \`${clip(value.type)}\` is not supported: use "auto", "none", "required" or {"type": "function", "name": …}.`);
    }
  }
  throw invalid('tool_choice', '`tool_choice` must be "auto", "none", "required" or {"type": "function", "name": …}.');
}
