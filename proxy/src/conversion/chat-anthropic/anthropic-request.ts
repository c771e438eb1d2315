import { invalid, isObject, present } from '../json-fields.js';
import { readToolCall, toolResultId } from '../chat-tool-calls.js';
import { cacheBreakpoint } from '../../providers/cache-breakpoint.js';
import type { ChatCompletionBody, ChatMessage } from '../../request/openai-chat.js';
import { thinkingOf } from '../../request/thinking-blocks.js';
import { thinkingPlan } from './thinking-plan.js';
import type {
  AnthropicBlock,
  AnthropicCacheControl,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicRequest,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from '../../providers/anthropic/anthropic-types.js';

/**
 * An OpenAI Chat Completions body (already validated by the chat endpoint) as an Anthropic
 * Messages request. Which fields are carried, dropped or refused is anthropic-params.ts, judged at
 * admission for every target of the route; the fields carried are mapped here.
 */
export interface RequestSettings {
  upstreamModel: string;
  stream: boolean;
  /** Anthropic requires max_tokens; used when the client set neither max_tokens nor max_completion_tokens. */
  defaultMaxTokens: number;
}

type Json = Record<string, unknown>;

/** Anthropic's temperature range is 0–1, OpenAI's 0–2: values above 1 are clamped to 1. */
export const MAX_TEMPERATURE = 1;

export function toAnthropicRequest(body: Readonly<Json>, settings: RequestSettings): AnthropicRequest {
  const thinking = thinkingPlan(body as Readonly<ChatCompletionBody>, settings.defaultMaxTokens);
  const { system, messages } = translateMessages(body.messages as unknown[], thinking.on);
  const maxTokens = thinking.on ? thinking.maxTokens : ((body.max_completion_tokens ?? body.max_tokens ?? settings.defaultMaxTokens) as number);
  const out: AnthropicRequest = { model: settings.upstreamModel, max_tokens: maxTokens, messages };
  if (thinking.on) out.thinking = { type: 'enabled', budget_tokens: thinking.budget };
  // One plain block is sent as a string; a cache breakpoint needs the block.
  if (system.length === 1 && system[0]?.cache_control === undefined) out.system = (system[0] as AnthropicTextBlock).text;
  else if (system.length > 0) out.system = system;

  const tools = translateTools(body.tools);
  if (tools !== null) {
    out.tools = tools;
    const choice = translateToolChoice(body.tool_choice, body.parallel_tool_calls);
    if (choice !== null) out.tool_choice = choice;
  }
  const stop = body.stop;
  if (typeof stop === 'string') out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) out.stop_sequences = stop as string[];
  if (typeof body.temperature === 'number' && !thinking.dropped.includes('temperature')) out.temperature = Math.min(body.temperature, MAX_TEMPERATURE);
  if (typeof body.top_p === 'number' && !thinking.dropped.includes('top_p')) out.top_p = body.top_p;
  if (present(body.user)) {
    if (typeof body.user !== 'string') throw invalid('user', '`user` must be a string.');
    out.metadata = { user_id: body.user };
  }
  const format = body.response_format;
  if (isObject(format) && format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema)) {
    out.output_config = { format: { type: 'json_schema', schema: format.json_schema.schema } };
  }
  if (settings.stream) out.stream = true;
  return out;
}

interface Translated {
  system: AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

/**
 * System and developer messages become the top-level `system` (Anthropic has no system turn);
 * tool results become `tool_result` blocks of a user turn; consecutive turns of one role are
 * merged into one, since Anthropic requires user and assistant turns to alternate. With thinking
 * on, an assistant turn starts with the thinking blocks it came with, as Anthropic made them.
 */
function translateMessages(list: unknown[], thinking: boolean): Translated {
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicMessage[] = [];
  const push = (role: 'user' | 'assistant', content: string | AnthropicBlock[]) => {
    const last = messages[messages.length - 1];
    if (last === undefined || last.role !== role) {
      messages.push({ role, content });
      return;
    }
    last.content = [...asBlocks(last.content), ...asBlocks(content)];
  };
  for (let i = 0; i < list.length; i++) {
    const message = list[i] as Json;
    const at = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...markLast(systemBlocks(message.content, at), message, at));
        break;
      case 'user':
        push('user', withMessageBreakpoint(userContent(message.content, at), message, at));
        break;
      case 'assistant':
        push('assistant', withThinking(withMessageBreakpoint(assistantContent(message, at), message, at), thinking ? thinkingOf(message as ChatMessage) : null));
        break;
      case 'tool':
        push('user', withMessageBreakpoint([toolResult(message, at)], message, at));
        break;
      default:
        throw invalid(`${at}.role`, `\`${at}.role\` must be one of system, developer, user, assistant, tool.`);
    }
  }
  return { system, messages };
}

function withThinking(content: string | AnthropicBlock[], blocks: readonly AnthropicThinkingBlock[] | null): string | AnthropicBlock[] {
  if (blocks === null) return content;
  return [...blocks, ...asBlocks(content)];
}

/** Empty text is left out of a merged turn: Anthropic refuses empty text blocks. */
function asBlocks(content: string | AnthropicBlock[]): AnthropicBlock[] {
  if (typeof content !== 'string') return content;
  return content === '' ? [] : [{ type: 'text', text: content }];
}

function textPart(part: Json, at: string): AnthropicTextBlock {
  if (typeof part.text !== 'string') throw invalid(`${at}.text`, `\`${at}.text\` must be a string.`);
  return withBreakpoint<AnthropicTextBlock>({ type: 'text', text: part.text }, part, at);
}

/** Anthropic prompt caching: a breakpoint (cache-breakpoint.ts) stays on the block it marks, as Anthropic's own API takes it. */
function cacheControl(value: unknown, at: string): AnthropicCacheControl | undefined {
  const breakpoint = cacheBreakpoint(value, at);
  if (breakpoint === undefined) return undefined;
  return breakpoint.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: breakpoint.ttl };
}

function withBreakpoint<B extends { cache_control?: AnthropicCacheControl }>(block: B, source: Json, at: string): B {
  const control = cacheControl(source.cache_control, at);
  if (control !== undefined) block.cache_control = control;
  return block;
}

/** A message-level `cache_control` marks the message's last block (string content becomes one). */
function withMessageBreakpoint(content: string | AnthropicBlock[], message: Json, at: string): string | AnthropicBlock[] {
  if (message.cache_control === undefined || message.cache_control === null) return content;
  // Thinking comes first and a breakpoint goes on the last block, which is never thinking.
  return markLast((typeof content === 'string' ? asBlocks(content) : content) as { cache_control?: AnthropicCacheControl }[], message, at) as AnthropicBlock[];
}

function markLast<B extends { cache_control?: AnthropicCacheControl }>(blocks: B[], message: Json, at: string): B[] {
  const control = cacheControl(message.cache_control, at);
  if (control === undefined) return blocks;
  const last = blocks[blocks.length - 1];
  if (last === undefined) throw invalid(`${at}.cache_control`, `\`${at}.cache_control\` marks an empty message.`);
  last.cache_control = control;
  return blocks;
}

function systemBlocks(content: unknown, at: string): AnthropicTextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const parts = content as Json[];
  return parts.map((part, j) => {
    const where = `${at}.content[${j}]`;
    if (part.type !== 'text') throw invalid(where, `\`${where}\`: a system message may hold text parts only.`);
    return textPart(part, where);
  });
}

function userContent(content: unknown, at: string): string | AnthropicBlock[] {
  if (typeof content === 'string') return content;
  return (content as Json[]).map((part, j) => userPart(part, `${at}.content[${j}]`));
}

function userPart(part: Json, at: string): AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock {
  switch (part.type) {
    case 'text':
      return textPart(part, at);
    case 'image_url':
      return imagePart(part, at);
    case 'file':
      return filePart(part, at);
    default:
      throw invalid(at, `\`${at}\`: content parts of type ${JSON.stringify(part.type)} are not supported by this model's provider (Anthropic).`);
  }
}

const DATA_URL = /^data:([^;,]+);base64,/;

/** `data:` URLs become base64 sources, http(s) URLs `url` sources Anthropic fetches itself. */
function imagePart(part: Json, at: string): AnthropicImageBlock {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : isObject(image) ? image.url : undefined;
  const where = `${at}.image_url`;
  if (typeof url !== 'string') throw invalid(where, `\`${where}.url\` must be a string.`);
  const data = DATA_URL.exec(url);
  if (data !== null) return withBreakpoint<AnthropicImageBlock>({ type: 'image', source: { type: 'base64', media_type: data[1] as string, data: url.slice(data[0].length) } }, part, at);
  if (/^https?:\/\//i.test(url)) return withBreakpoint<AnthropicImageBlock>({ type: 'image', source: { type: 'url', url } }, part, at);
  throw invalid(where, `\`${where}.url\` must be a base64 data URL or an http(s) URL.`);
}

/** A PDF sent as a base64 data URL becomes a document block; other files have no counterpart. */
function filePart(part: Json, at: string): AnthropicDocumentBlock {
  const file = isObject(part.file) ? part.file : {};
  const data = typeof file.file_data === 'string' ? DATA_URL.exec(file.file_data) : null;
  if (data === null || data[1] !== 'application/pdf') {
    throw invalid(`${at}.file`, `\`${at}.file\`: only a PDF given as \`file_data\` (a base64 data URL) is supported by this model's provider (Anthropic).`);
  }
  return withBreakpoint<AnthropicDocumentBlock>({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: (file.file_data as string).slice(data[0].length) } }, part, at);
}

function assistantContent(message: Json, at: string): string | AnthropicBlock[] {
  const content = message.content;
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  let blocks: AnthropicBlock[];
  if (content === null || content === undefined) blocks = [];
  else if (typeof content === 'string') {
    if (calls.length === 0) return content;
    blocks = asBlocks(content);
  } else {
    blocks = (content as Json[]).map((part, j) => {
      const where = `${at}.content[${j}]`;
      if (part.type === 'text') return textPart(part, where);
      // A refusal the model gave earlier is part of the conversation: it goes back as text.
      if (part.type === 'refusal' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
      throw invalid(where, `\`${where}\`: an assistant message may hold text parts only.`);
    });
  }
  for (let k = 0; k < calls.length; k++) blocks.push(toolUse(calls[k], `${at}.tool_calls[${k}]`));
  return blocks;
}

function toolUse(call: unknown, at: string): AnthropicToolUseBlock {
  const { id, name, input } = readToolCall(call, at);
  return { type: 'tool_use', id, name, input };
}

function toolResult(message: Json, at: string): AnthropicToolResultBlock {
  const id = toolResultId(message, at);
  const content = message.content;
  if (typeof content === 'string') return content === '' ? { type: 'tool_result', tool_use_id: id } : { type: 'tool_result', tool_use_id: id, content };
  const parts = (content as Json[]).map((part, j) => {
    const where = `${at}.content[${j}]`;
    if (part.type === 'text') return textPart(part, where);
    if (part.type === 'image_url') return imagePart(part, where);
    throw invalid(where, `\`${where}\`: a tool result may hold text and image parts only.`);
  });
  return { type: 'tool_result', tool_use_id: id, content: parts };
}

function translateTools(value: unknown): AnthropicTool[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  return (value as Json[]).map((tool, i) => {
    const at = `tools[${i}]`;
    if (tool.type !== 'function' || !isObject(tool.function)) throw invalid(at, `\`${at}\`: only function tools are supported by this model's provider (Anthropic).`);
    const fn = tool.function;
    if (typeof fn.name !== 'string' || fn.name === '') throw invalid(`${at}.function.name`, `\`${at}.function.name\` must be a non-empty string.`);
    // OpenAI lets a function omit its parameters; Anthropic needs an object schema.
    const out: AnthropicTool = { name: fn.name, input_schema: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') out.description = fn.description;
    return withBreakpoint(out, tool, at);
  });
}

function translateToolChoice(choice: unknown, parallel: unknown): AnthropicToolChoice | null {
  const serial = parallel === false;
  let out: Exclude<AnthropicToolChoice, { type: 'none' }>;
  if (choice === undefined || choice === null) {
    if (!serial) return null;
    out = { type: 'auto' };
  } else if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') return { type: 'none' };
  else if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string' && choice.function.name !== '') {
    out = { type: 'tool', name: choice.function.name };
  } else {
    throw invalid('tool_choice', '`tool_choice` must be "auto", "required", "none" or {"type":"function","function":{"name":…}}.');
  }
  if (serial) out.disable_parallel_tool_use = true;
  return out;
}
