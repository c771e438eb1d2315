import { cacheControlOf, carried, carry, type CacheControl } from './cache-hints.js';
import { checkDepth, invalid, requireObject, requireString, unsupported } from '../../protocols/anthropic-messages/request-fields.js';
import type { ChatMessage, ChatToolCall } from '../../request/openai-chat.js';
import { carryThinking, readThinkingBlocks } from '../../request/thinking-blocks.js';

/**
 * Anthropic's `system` and `messages` as the internal request's OpenAI messages. A user turn's
 * `tool_result` blocks become `role: tool` messages, in order, and the rest of that turn (text,
 * images) one user message after them; an assistant turn's `tool_use` blocks become its
 * `tool_calls`. Signed thinking blocks of assistant turns go with the turn out of sight of JSON
 * (request/thinking-blocks.ts), for a Claude target reached by translation, which needs them in a
 * tool loop; no other provider is sent them. Breakpoints
 * (`cache_control`) go with what they mark, out of sight of JSON (cache-hints.ts): on a part, or
 * on the message when its blocks become one string (an assistant turn, a tool result, one text).
 */
type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const THINKING = new Set(['thinking', 'redacted_thinking']);

/** The system prompt as a system message (null when there is none). */
export function translateSystem(system: unknown): ChatMessage | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system === '' ? null : { role: 'system', content: system };
  if (!Array.isArray(system)) throw invalid('system', 'must be a string or an array of text blocks');
  const parts: ContentPart[] = [];
  for (let i = 0; i < system.length; i++) {
    const at = `system.${i}`;
    const block = requireObject(system[i], at);
    if (block.type !== 'text') throw invalid(`${at}.type`, 'system blocks must be of type `text`');
    parts.push(carry({ type: 'text', text: requireString(block.text, `${at}.text`) }, cacheControlOf(block, at)));
  }
  return parts.length === 0 ? null : withParts('system', parts);
}

export function translateMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) throw invalid('messages', messages === undefined ? 'Field required' : 'must be an array of messages');
  if (messages.length === 0) throw invalid('messages', 'at least one message is required');
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const at = `messages.${i}`;
    const message = requireObject(messages[i], at);
    const role = message.role;
    if (role === 'user') userTurn(message.content, at, out);
    else if (role === 'assistant') out.push(assistantTurn(message.content, at));
    // An instruction given mid-conversation (Claude Code sends them): a system message where it stands.
    else if (role === 'system') out.push(systemTurn(message.content, at));
    else throw invalid(`${at}.role`, "must be 'user', 'assistant' or 'system'");
  }
  return out;
}

function systemTurn(content: unknown, at: string): ChatMessage {
  const blocks = contentBlocks(content, at);
  if (typeof blocks === 'string') return { role: 'system', content: blocks };
  const parts: ContentPart[] = [];
  for (let j = 0; j < blocks.length; j++) {
    const path = `${at}.content.${j}`;
    const { block, type } = blockType(blocks[j], path);
    if (type !== 'text') throw invalid(`${path}.type`, 'a system message holds text blocks only');
    parts.push(carry({ type: 'text', text: requireString(block.text, `${path}.text`) }, cacheControlOf(block, path)));
  }
  if (parts.length === 0) throw invalid(`${at}.content`, 'a system message needs at least one text block');
  return withParts('system', parts);
}

function contentBlocks(content: unknown, at: string): unknown[] | string {
  if (typeof content === 'string' || Array.isArray(content)) return content;
  throw invalid(`${at}.content`, content === undefined ? 'Field required' : 'must be a string or an array of content blocks');
}

function blockType(block: unknown, at: string): { block: Record<string, unknown>; type: string } {
  const object = requireObject(block, at);
  if (typeof object.type !== 'string') throw invalid(`${at}.type`, object.type === undefined ? 'Field required' : 'must be a string');
  return { block: object, type: object.type };
}

function userTurn(content: unknown, at: string, out: ChatMessage[]): void {
  const blocks = contentBlocks(content, at);
  if (typeof blocks === 'string') {
    out.push({ role: 'user', content: blocks });
    return;
  }
  if (blocks.length === 0) throw invalid(`${at}.content`, 'a user turn needs at least one content block');
  const parts: ContentPart[] = [];
  for (let j = 0; j < blocks.length; j++) {
    const path = `${at}.content.${j}`;
    const { block, type } = blockType(blocks[j], path);
    if (type === 'tool_result') {
      // The internal request answers tool calls with tool messages right after the call.
      if (parts.length > 0) throw invalid(path, 'tool_result blocks must come before any other block of the turn');
      out.push(toolMessage(block, path));
    } else if (type === 'text') parts.push(carry({ type: 'text', text: requireString(block.text, `${path}.text`) }, cacheControlOf(block, path)));
    else if (type === 'image') parts.push(carry(imagePart(block.source, `${path}.source`), cacheControlOf(block, path)));
    else if (type === 'tool_use' || THINKING.has(type)) throw invalid(`${path}.type`, `${type} blocks belong in an assistant turn`);
    else throw unsupported(`${path}.type`, `\`${type}\` blocks have no equivalent in the internal request`);
  }
  if (parts.length > 0) out.push(withParts('user', parts));
}

function assistantTurn(content: unknown, at: string): ChatMessage {
  const blocks = contentBlocks(content, at);
  if (typeof blocks === 'string') return { role: 'assistant', content: blocks };
  let text = '';
  const calls: ChatToolCall[] = [];
  const thinking: Record<string, unknown>[] = [];
  // The turn becomes one message: a breakpoint on any of its blocks marks its end.
  let control: CacheControl | undefined;
  for (let j = 0; j < blocks.length; j++) {
    const path = `${at}.content.${j}`;
    const { block, type } = blockType(blocks[j], path);
    if (!THINKING.has(type)) control = cacheControlOf(block, path) ?? control;
    // Pieces of one answer (a text block is cut wherever a citation starts): joined as they came.
    if (type === 'text') text += requireString(block.text, `${path}.text`);
    else if (type === 'tool_use') calls.push(toolCall(block, path));
    else if (THINKING.has(type)) thinking.push(block);
    else if (type === 'tool_result' || type === 'image') throw invalid(`${path}.type`, `${type} blocks belong in a user turn`);
    else throw unsupported(`${path}.type`, `\`${type}\` blocks have no equivalent in the internal request`);
  }
  const message: ChatMessage = calls.length === 0 ? { role: 'assistant', content: text } : { role: 'assistant', content: text === '' ? null : text, tool_calls: calls };
  // Signed thinking goes with the turn, for a Claude target that is not native (thinking-blocks.ts).
  const signed = thinking.flatMap((block) => readThinkingBlocks([block]) ?? []);
  if (signed.length > 0) carryThinking(message, signed);
  return carry(message, control);
}

function toolCall(block: Record<string, unknown>, path: string): ChatToolCall {
  const id = requireString(block.id, `${path}.id`, { nonEmpty: true });
  const name = requireString(block.name, `${path}.name`, { nonEmpty: true });
  const input = requireObject(block.input, `${path}.input`);
  checkDepth(input, `${path}.input`);
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

function toolMessage(block: Record<string, unknown>, path: string): ChatMessage {
  const id = requireString(block.tool_use_id, `${path}.tool_use_id`, { nonEmpty: true });
  const isError = block.is_error;
  if (isError !== undefined && isError !== null && typeof isError !== 'boolean') throw invalid(`${path}.is_error`, 'must be a boolean');
  let text = '';
  let control = cacheControlOf(block, path);
  const content = block.content;
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const pieces: string[] = [];
    for (let k = 0; k < content.length; k++) {
      const at = `${path}.content.${k}`;
      const { block: inner, type } = blockType(content[k], at);
      if (type === 'text') {
        pieces.push(requireString(inner.text, `${at}.text`));
        control = cacheControlOf(inner, at) ?? control;
      } else throw unsupported(`${at}.type`, `a tool message of the internal request holds text only, not \`${type}\` blocks`);
    }
    text = pieces.join('\n');
  } else if (content !== undefined && content !== null) throw invalid(`${path}.content`, 'must be a string or an array of text blocks');
  // A tool message has no error flag: the model is told in words, as Anthropic's models are.
  if (isError === true) text = text === '' ? 'Error' : `Error: ${text}`;
  return carry({ role: 'tool', tool_call_id: id, content: text }, control);
}

function imagePart(source: unknown, path: string): ContentPart {
  const object = requireObject(source, path);
  if (object.type === 'base64') {
    const mediaType = requireString(object.media_type, `${path}.media_type`);
    if (!IMAGE_TYPES.has(mediaType)) throw invalid(`${path}.media_type`, 'must be one of image/jpeg, image/png, image/gif, image/webp');
    const data = requireString(object.data, `${path}.data`, { nonEmpty: true });
    return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
  }
  if (object.type === 'url') {
    const url = requireString(object.url, `${path}.url`, { nonEmpty: true });
    if (!/^https?:\/\//i.test(url)) throw invalid(`${path}.url`, 'must be an http or https URL');
    return { type: 'image_url', image_url: { url } };
  }
  if (object.type === 'file') throw unsupported(`${path}.type`, 'file sources (Files API ids) cannot be sent to the providers behind it');
  throw invalid(`${path}.type`, "must be 'base64' or 'url'");
}

/**
 * One text part as a plain string (what every OpenAI-compatible provider reads), its breakpoint
 * then on the message; otherwise the parts.
 */
function withParts(role: 'system' | 'user', parts: ContentPart[]): ChatMessage {
  const only = parts[0];
  if (parts.length === 1 && only !== undefined && only.type === 'text') return carry({ role, content: only.text }, carried(only));
  return { role, content: parts };
}
