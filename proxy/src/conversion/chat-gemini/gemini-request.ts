import { invalid as refuse, isObject, present } from '../json-fields.js';
import { toGeminiConversation } from './gemini-contents.js';
import { toGeminiSchema } from './gemini-schema.js';
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest } from '../../providers/gemini/gemini-wire.js';

/**
 * A validated OpenAI Chat Completions body as a Gemini `GenerateContentRequest`. What Gemini has
 * an equivalent for is translated; an OpenAI feature it cannot honour is refused with a 400
 * naming the field, rather than silently answered without it. Fields that only describe the
 * request to OpenAI (user, metadata, store, service_tier, parallel_tool_calls…) and fields
 * OpenAI does not define are not sent. docs/providers.md has the whole table.
 */
export interface GeminiRequestOptions {
  safetySettings?: { category: string; threshold: string }[];
}

type Body = Readonly<Record<string, unknown>>;

const THINKING_LEVELS = new Set(['minimal', 'low', 'medium', 'high']);

export function toGeminiRequest(body: Body, options: GeminiRequestOptions = {}): GeminiRequest {
  const request: GeminiRequest = toGeminiConversation(body.messages as unknown[]);
  const tools = functionDeclarations(body);
  if (tools.length > 0) {
    const choice = toolChoice(body.tool_choice);
    const declarations = choice.only === undefined ? tools : tools.filter((t) => choice.only?.includes(t.name));
    if (declarations.length === 0) throw refuse('tool_choice', '`tool_choice` allows none of the tools in `tools`.');
    request.tools = [{ functionDeclarations: declarations }];
    if (choice.config !== undefined) request.toolConfig = { functionCallingConfig: choice.config };
  }
  const config = generationConfig(body);
  if (Object.keys(config).length > 0) request.generationConfig = config;
  if (options.safetySettings !== undefined) request.safetySettings = options.safetySettings;
  return request;
}

function generationConfig(body: Body): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;

  const stop = body.stop;
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config.stopSequences = stop as string[];

  if (present(body.seed)) {
    if (!Number.isInteger(body.seed)) throw refuse('seed', '`seed` must be an integer.');
    config.seed = body.seed as number;
  }
  for (const [field, name] of [
    ['presence_penalty', 'presencePenalty'],
    ['frequency_penalty', 'frequencyPenalty'],
  ] as const) {
    const value = body[field];
    if (!present(value)) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < -2 || value > 2) throw refuse(field, `\`${field}\` must be a number from -2 to 2.`);
    config[name] = value;
  }

  const format = body.response_format;
  if (present(format)) {
    if (!isObject(format)) throw refuse('response_format', '`response_format` must be an object.');
    if (format.type === 'json_object') {
      config.responseMimeType = 'application/json';
    } else if (format.type === 'json_schema') {
      config.responseMimeType = 'application/json';
      const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
      if (present(schema)) config.responseSchema = toGeminiSchema(schema, 'response_format.json_schema.schema');
    } else if (format.type !== 'text') {
      throw refuse('response_format.type', '`response_format.type` must be text, json_object or json_schema.');
    }
  }

  const effort = body.reasoning_effort;
  if (present(effort)) {
    if (typeof effort !== 'string' || !THINKING_LEVELS.has(effort)) throw refuse('reasoning_effort', '`reasoning_effort` must be minimal, low, medium or high with Gemini.');
    config.thinkingConfig = { thinkingLevel: effort };
  }
  return config;
}

function functionDeclarations(body: Body): GeminiFunctionDeclaration[] {
  const tools = body.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((tool: Record<string, unknown>, i) => {
    const at = `tools[${i}]`;
    if (tool.type !== 'function') throw refuse(`${at}.type`, `\`${at}.type\` must be function with Gemini.`);
    const fn = tool.function;
    if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') throw refuse(`${at}.function.name`, `\`${at}.function.name\` is required.`);
    const declaration: GeminiFunctionDeclaration = { name: fn.name };
    if (typeof fn.description === 'string') declaration.description = fn.description;
    if (present(fn.parameters)) {
      const parameters = toGeminiSchema(fn.parameters, `${at}.function.parameters`);
      // Gemini refuses an OBJECT with no properties; a function without arguments has none.
      const empty = parameters.type === 'OBJECT' && (!isObject(parameters.properties) || Object.keys(parameters.properties).length === 0);
      if (!empty) declaration.parameters = parameters;
    }
    return declaration;
  });
}

interface ToolChoice {
  config?: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
  /** Only these tools are offered (OpenAI's allowed_tools in auto mode). */
  only?: string[];
}

function toolChoice(choice: unknown): ToolChoice {
  if (!present(choice)) return {};
  if (choice === 'auto') return { config: { mode: 'AUTO' } };
  if (choice === 'none') return { config: { mode: 'NONE' } };
  if (choice === 'required') return { config: { mode: 'ANY' } };
  if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') {
    return { config: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  if (isObject(choice) && choice.type === 'allowed_tools' && isObject(choice.allowed_tools) && Array.isArray(choice.allowed_tools.tools)) {
    const names = choice.allowed_tools.tools.map((t: unknown) => (isObject(t) && isObject(t.function) && typeof t.function.name === 'string' ? t.function.name : null));
    if (names.some((n) => n === null)) throw refuse('tool_choice.allowed_tools.tools', 'Each allowed tool must be a function with a name.');
    const only = names as string[];
    if (choice.allowed_tools.mode === 'required') return { config: { mode: 'ANY', allowedFunctionNames: only }, only };
    if (choice.allowed_tools.mode === 'auto') return { config: { mode: 'AUTO' }, only };
  }
  throw refuse('tool_choice', '`tool_choice` must be auto, none, required, a named function or allowed_tools.');
}
