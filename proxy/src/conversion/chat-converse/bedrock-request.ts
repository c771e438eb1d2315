import { invalid, isObject, present } from '../json-fields.js';
import { readToolCall, toolResultId } from '../chat-tool-calls.js';
import { cacheBreakpoint } from '../../providers/cache-breakpoint.js';
import type { BedrockCachePoint, BedrockContentBlock, BedrockImageBlock, BedrockMessage, BedrockReasoningBlock, BedrockRequest, BedrockTool, BedrockToolChoice, BedrockToolResult } from '../../providers/bedrock/bedrock-wire.js';
import type { ChatCompletionBody, ChatMessage, ThinkingBlock } from '../../request/openai-chat.js';
import { thinkingOf } from '../../request/thinking-blocks.js';
import { thinkingPlan, type ThinkingPlan } from '../chat-anthropic/thinking-plan.js';

/**
 * An OpenAI Chat Completions body (validated by the chat endpoint) as a Bedrock Converse request.
 * The model is named in the path, not the body. What Converse cannot honour is refused with a 400
 * naming the field rather than dropped: a client asking for JSON mode or several choices would
 * otherwise quietly get something else. OpenAI-only hints that change nothing are left out.
 */
type Json = Record<string, unknown>;

/**
 * For a Claude model (the adapter knows which ids are), `reasoning_effort` is Anthropic's extended
 * thinking, sent as `additionalModelRequestFields.thinking` and planned as for Anthropic's own API
 * (chat-anthropic/thinking-plan.ts): Bedrock passes the field to the model and answers with
 * `reasoningContent` blocks. Other models take no thinking.
 */
export interface ConverseSettings {
  extendedThinking: boolean;
  /** The output room kept for the answer when thinking is on and the client set no limit. */
  defaultMaxTokens: number;
}

const NO_THINKING: ThinkingPlan = { on: false, dropped: [] };

/** Converse's temperature range is 0–1 for the models it serves, OpenAI's 0–2: values above 1 are clamped. */
const MAX_TEMPERATURE = 1;

const IMAGE_FORMATS: Readonly<Record<string, BedrockImageBlock['format']>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DATA_URL = /^data:([^;,]+);base64,/;

export function toBedrockRequest(body: Readonly<Json>, settings?: ConverseSettings): BedrockRequest {
  const thinking = settings?.extendedThinking === true ? thinkingPlan(body as Readonly<ChatCompletionBody>, settings.defaultMaxTokens) : NO_THINKING;
  const { system, messages } = translateMessages(body.messages as unknown[], thinking.on);
  const out: BedrockRequest = { messages };
  if (system.length > 0) out.system = system;
  const inference: NonNullable<BedrockRequest['inferenceConfig']> = {};
  const max = thinking.on ? thinking.maxTokens : (body.max_completion_tokens ?? body.max_tokens);
  if (typeof max === 'number') inference.maxTokens = max;
  if (typeof body.temperature === 'number' && !thinking.dropped.includes('temperature')) inference.temperature = Math.min(body.temperature, MAX_TEMPERATURE);
  if (typeof body.top_p === 'number' && !thinking.dropped.includes('top_p')) inference.topP = body.top_p;
  if (thinking.on) out.additionalModelRequestFields = { thinking: { type: 'enabled', budget_tokens: thinking.budget } };
  const stop = body.stop;
  if (typeof stop === 'string') inference.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) inference.stopSequences = stop as string[];
  if (inference.maxTokens !== undefined || inference.temperature !== undefined || inference.topP !== undefined || inference.stopSequences !== undefined) out.inferenceConfig = inference;
  const toolConfig = translateTools(body.tools, body.tool_choice);
  if (toolConfig !== null) out.toolConfig = toolConfig;
  return out;
}

/**
 * System and developer messages become the top-level `system`; tool results become `toolResult`
 * blocks of a user turn; consecutive turns of one role are merged, since Converse requires user and
 * assistant turns to alternate. Empty text is left out: Converse refuses blank text blocks.
 */
function translateMessages(list: unknown[], thinking: boolean): { system: SystemBlock[]; messages: BedrockMessage[] } {
  const system: SystemBlock[] = [];
  const messages: BedrockMessage[] = [];
  const push = (role: 'user' | 'assistant', content: BedrockContentBlock[]) => {
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };
  for (let i = 0; i < list.length; i++) {
    const message = list[i] as Json;
    const at = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...markEnd(textBlocks(message.content, at, 'a system message'), message, at));
        break;
      case 'user':
        push('user', markEnd(userContent(message.content, at), message, at));
        break;
      case 'assistant':
        push('assistant', withReasoning(markEnd(assistantContent(message, at), message, at), thinking ? thinkingOf(message as ChatMessage) : null));
        break;
      case 'tool':
        push('user', toolTurn(message, at));
        break;
      default:
        throw invalid(`${at}.role`, `\`${at}.role\` must be one of system, developer, user, assistant, tool.`);
    }
  }
  return { system, messages };
}

type SystemBlock = { text: string } | BedrockCachePoint;

/** With thinking on, an assistant turn starts with the reasoning it came with, as the model made it. */
function withReasoning(content: BedrockContentBlock[], blocks: readonly ThinkingBlock[] | null): BedrockContentBlock[] {
  if (blocks === null) return content;
  const reasoning = blocks.map((block): BedrockReasoningBlock => (block.type === 'thinking' ? { reasoningContent: { reasoningText: { text: block.thinking, signature: block.signature } } } : { reasoningContent: { redactedContent: block.data } }));
  return [...reasoning, ...content];
}

/**
 * Bedrock prompt caching: a breakpoint (cache-breakpoint.ts) becomes a `cachePoint` block right
 * after the block it marks, in `system`, in a message's content or among the tools.
 */
function cachePoint(value: unknown, at: string): BedrockCachePoint | undefined {
  const breakpoint = cacheBreakpoint(value, at);
  if (breakpoint === undefined) return undefined;
  return { cachePoint: breakpoint.ttl === undefined ? { type: 'default' } : { type: 'default', ttl: breakpoint.ttl } };
}

/** Adds the part's checkpoint after the blocks so far; one that marks nothing (an empty text first) is refused. */
function markAfter<B>(out: (B | BedrockCachePoint)[], source: Json, at: string): void {
  const point = cachePoint(source.cache_control, at);
  if (point === undefined) return;
  const last = out[out.length - 1];
  if (last === undefined) throw invalid(`${at}.cache_control`, `\`${at}.cache_control\` marks nothing: Bedrock Converse leaves out empty text.`);
  if (!isObject(last) || !('cachePoint' in last)) out.push(point);
}

/** A message-level `cache_control` marks the message's last block. */
function markEnd<B>(blocks: (B | BedrockCachePoint)[], message: Json, at: string): (B | BedrockCachePoint)[] {
  if (present(message.cache_control)) markAfter(blocks, message, at);
  return blocks;
}

/**
 * A tool message is one `toolResult` block, which holds no checkpoint: a breakpoint on the message
 * or on any of its parts goes after the block (once).
 */
function toolTurn(message: Json, at: string): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = [{ toolResult: toolResult(message, at) }];
  const parts = Array.isArray(message.content) ? (message.content as Json[]) : [];
  for (let j = 0; j < parts.length; j++) markAfter(blocks, parts[j] as Json, `${at}.content[${j}]`);
  return markEnd(blocks, message, at);
}

/** A content that may hold text parts only, as text blocks (with their checkpoints). */
function textBlocks(content: unknown, at: string, what: string): SystemBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const out: SystemBlock[] = [];
  for (let j = 0; j < content.length; j++) {
    const part = content[j] as Json;
    const where = `${at}.content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') out.push({ text: part.text });
    } else if (part.type === 'refusal' && typeof part.refusal === 'string') out.push({ text: part.refusal });
    else throw invalid(where, `\`${where}\`: ${what} may hold text parts only.`);
    markAfter(out, part, where);
  }
  return out;
}

function userContent(content: unknown, at: string): BedrockContentBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const out: BedrockContentBlock[] = [];
  const parts = Array.isArray(content) ? (content as Json[]) : [];
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j] as Json;
    const where = `${at}.content[${j}]`;
    if (part.type === 'text') {
      if (typeof part.text !== 'string') throw invalid(`${where}.text`, `\`${where}.text\` must be a string.`);
      if (part.text !== '') out.push({ text: part.text });
    } else if (part.type === 'image_url') out.push({ image: image(part, where) });
    else if (part.type === 'file') out.push({ document: pdf(part, where, j) });
    else throw invalid(where, `\`${where}\`: content parts of type ${JSON.stringify(part.type)} are not supported by this model's provider (Bedrock Converse).`);
    markAfter(out, part, where);
  }
  return out;
}

/** Converse takes image bytes only (or an S3 location): an image must come as a base64 data URL. */
function image(part: Json, at: string): BedrockImageBlock {
  const value = part.image_url;
  const url = typeof value === 'string' ? value : isObject(value) ? value.url : undefined;
  const where = `${at}.image_url.url`;
  if (typeof url !== 'string') throw invalid(where, `\`${where}\` must be a string.`);
  const data = DATA_URL.exec(url);
  const format = data === null ? undefined : IMAGE_FORMATS[(data[1] as string).toLowerCase()];
  if (data === null || format === undefined) throw invalid(where, `\`${where}\` must be a base64 data URL of a PNG, JPEG, GIF or WebP image: Bedrock Converse does not fetch URLs.`);
  return { format, source: { bytes: url.slice(data[0].length) } };
}

function pdf(part: Json, at: string, j: number): { format: 'pdf'; name: string; source: { bytes: string } } {
  const file = isObject(part.file) ? part.file : {};
  const data = typeof file.file_data === 'string' ? DATA_URL.exec(file.file_data) : null;
  if (data === null || data[1] !== 'application/pdf') throw invalid(`${at}.file`, `\`${at}.file\`: only a PDF given as \`file_data\` (a base64 data URL) is supported by this model's provider (Bedrock Converse).`);
  // Converse requires a document name of letters, digits, spaces and a few marks.
  const given = typeof file.filename === 'string' ? file.filename.replace(/\.pdf$/i, '').replace(/[^A-Za-z0-9 ()[\]-]/g, ' ').trim() : '';
  return { format: 'pdf', name: given === '' ? `document ${j + 1}` : given.slice(0, 200), source: { bytes: (file.file_data as string).slice(data[0].length) } };
}

function assistantContent(message: Json, at: string): BedrockContentBlock[] {
  const out: BedrockContentBlock[] = textBlocks(message.content ?? '', at, 'an assistant message');
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  for (let k = 0; k < calls.length; k++) {
    const { id, name, input } = readToolCall(calls[k], `${at}.tool_calls[${k}]`);
    out.push({ toolUse: { toolUseId: id, name, input } });
  }
  return out;
}

function toolResult(message: Json, at: string): BedrockToolResult {
  const id = toolResultId(message, at);
  const content = message.content;
  if (typeof content === 'string') return { toolUseId: id, content: [{ text: content === '' ? ' ' : content }] };
  const parts: BedrockToolResult['content'] = [];
  const list = Array.isArray(content) ? (content as Json[]) : [];
  for (let j = 0; j < list.length; j++) {
    const part = list[j] as Json;
    const where = `${at}.content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') parts.push({ text: part.text === '' ? ' ' : part.text });
    else if (part.type === 'image_url') parts.push({ image: image(part, where) });
    else throw invalid(where, `\`${where}\`: a tool result may hold text and image parts only.`);
  }
  return { toolUseId: id, content: parts.length === 0 ? [{ text: ' ' }] : parts };
}

/**
 * `tools` as `toolConfig`. Converse has no "none": `tool_choice: "none"` sends no tools, so the
 * model cannot call one (a conversation that already holds tool calls then needs its tools, and
 * Bedrock answers 400).
 */
function translateTools(value: unknown, choice: unknown): BedrockRequest['toolConfig'] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  if (choice === 'none') return null;
  const tools: (BedrockTool | BedrockCachePoint)[] = [];
  for (let i = 0; i < value.length; i++) {
    const tool = value[i] as Json;
    const at = `tools[${i}]`;
    if (tool.type !== 'function' || !isObject(tool.function)) throw invalid(at, `\`${at}\`: only function tools are supported by this model's provider (Bedrock Converse).`);
    const fn = tool.function;
    if (typeof fn.name !== 'string' || fn.name === '') throw invalid(`${at}.function.name`, `\`${at}.function.name\` must be a non-empty string.`);
    const spec: BedrockTool['toolSpec'] = { name: fn.name, inputSchema: { json: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } } };
    if (typeof fn.description === 'string' && fn.description !== '') spec.description = fn.description;
    tools.push({ toolSpec: spec });
    markAfter(tools, tool, at);
  }
  let toolChoice: BedrockToolChoice | undefined;
  if (choice === undefined || choice === null) toolChoice = undefined;
  else if (choice === 'auto') toolChoice = { auto: {} };
  else if (choice === 'required') toolChoice = { any: {} };
  else if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string' && choice.function.name !== '') toolChoice = { tool: { name: choice.function.name } };
  else throw invalid('tool_choice', '`tool_choice` must be "auto", "required", "none" or {"type":"function","function":{"name":…}}.');
  return toolChoice === undefined ? { tools } : { tools, toolChoice };
}
