import { clip, invalid, isObject, isSet } from '../../protocols/openai-responses/checks.js';
import type { ChatContentPart, ChatImagePart, ChatMessage, ChatToolCall, ThinkingBlock } from '../../request/openai-chat.js';
import { carryThinking, decodeThinking } from '../../request/thinking-blocks.js';
import type { ToolSet } from './tools.js';

/**
 * The Responses `input` as Chat Completions messages. A string is one user message. A list holds
 * items: `message` items (the `type` may be left out) become messages of their role; consecutive
 * `function_call` items become the `tool_calls` of one assistant message (joined to the assistant
 * message just before them, as chat history has them); `function_call_output` items become `tool`
 * messages; `custom_tool_call` items and their outputs likewise, a custom call's input as the one
 * argument `input` (tools.ts); `additional_tools` items declare tools, as `tools` does.
 * A `reasoning` item whose `encrypted_content` the gateway wrote (a provider's thinking blocks,
 * request/thinking-blocks.ts) goes with the assistant turn that follows it, for the provider that
 * made it; any other reasoning item (another provider's hidden reasoning) is left out, as a chat
 * request has no place for it. Items that refer to stored state or belong to built-in tools are
 * refused.
 */
const MESSAGE_ROLES = new Set<string>(['user', 'assistant', 'system', 'developer']);

function isMessageRole(role: unknown): role is 'user' | 'assistant' | 'system' | 'developer' {
  return typeof role === 'string' && MESSAGE_ROLES.has(role);
}

export function inputMessages(input: unknown, tools: ToolSet): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0) throw invalid('input', '`input` is required: a string or a non-empty list of input items.');
  const messages: ChatMessage[] = [];
  // Reasoning read, waiting for the assistant turn it belongs to.
  let thinking: ThinkingBlock[] | null = null;
  const turn = (message: ChatMessage) => {
    if (thinking !== null && message.role === 'assistant') carryThinking(message, thinking);
    thinking = null;
  };
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(at, `\`${at}\` must be an input item (an object).`);
    const type = item.type ?? (isSet(item.role) ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const message = messageItem(item, at);
        messages.push(message);
        turn(message);
        break;
      }
      case 'function_call':
        turn(addCall(messages, functionCall(item, at, tools)));
        break;
      case 'custom_tool_call':
        turn(addCall(messages, customCall(item, at, tools)));
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        messages.push(functionCallOutput(item, at));
        thinking = null;
        break;
      case 'additional_tools':
        tools.addAll(item.tools, `${at}.tools`);
        break;
      case 'reasoning': {
        const blocks = decodeThinking(item.encrypted_content);
        if (blocks !== null) thinking = [...(thinking ?? []), ...blocks];
        break;
      }
      case 'item_reference':
        throw invalid(
          at,
          // Resolved before the parse when the gateway keeps responses (responses/item-references.ts).
          `\`${at}\` is an item_reference, which this gateway resolves from the responses it keeps, and it keeps none (it runs without its control plane): send the item itself. (With the Vercel AI SDK, set providerOptions: { openai: { store: false } }.)`,
        );
      default:
        if (typeof type !== 'string') throw invalid(`${at}.type`, `\`${at}.type\` must be message, function_call or function_call_output.`);
        throw invalid(`${at}.type`, `Input items of type \`${clip(type)}\` are not supported: only message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, additional_tools and reasoning items are (built-in tools are not).`);
    }
  }
  if (messages.length === 0) throw invalid('input', '`input` must hold at least one message, function_call or function_call_output item.');
  return messages;
}

function messageItem(item: Record<string, unknown>, at: string): ChatMessage {
  const role = item.role;
  if (!isMessageRole(role)) throw invalid(`${at}.role`, `\`${at}.role\` must be one of user, assistant, system, developer.`);
  const content = item.content;
  if (typeof content === 'string') return { role, content };
  if (!Array.isArray(content)) throw invalid(`${at}.content`, `\`${at}.content\` must be a string or a list of content parts.`);
  const parts: ChatContentPart[] = [];
  for (let j = 0; j < content.length; j++) parts.push(contentPart(content[j], role, `${at}.content[${j}]`));
  return { role, content: parts };
}

/** One content part as a chat part: text for every role; images and files from the user only. */
function contentPart(part: unknown, role: string, at: string): ChatContentPart {
  if (!isObject(part) || typeof part.type !== 'string') throw invalid(at, `\`${at}\` must be a content part with a \`type\`.`);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') throw invalid(`${at}.text`, `\`${at}.text\` must be a string.`);
      return { type: 'text', text: part.text };
    case 'refusal':
      if (role !== 'assistant') break;
      if (typeof part.refusal !== 'string') throw invalid(`${at}.refusal`, `\`${at}.refusal\` must be a string.`);
      // An earlier refusal is what the assistant said; as history it is text.
      return { type: 'text', text: part.refusal };
    case 'input_image':
      if (role !== 'user') break;
      return imagePart(part, at);
    case 'input_file':
      if (role !== 'user') break;
      return filePart(part, at);
    default:
      throw invalid(`${at}.type`, `Content parts of type \`${clip(part.type)}\` are not supported: use input_text, output_text, input_image or input_file.`);
  }
  throw invalid(`${at}.type`, `A ${role} message cannot hold a \`${part.type}\` part.`);
}

function imagePart(part: Record<string, unknown>, at: string): ChatImagePart {
  if (isSet(part.file_id)) throw invalid(`${at}.file_id`, `\`${at}.file_id\` is not supported: the gateway keeps no files. Send the image as image_url (a URL or a data: URL).`);
  if (typeof part.image_url !== 'string' || part.image_url.length === 0) throw invalid(`${at}.image_url`, `\`${at}.image_url\` must be a URL or a data: URL.`);
  const detail = part.detail;
  if (isSet(detail) && detail !== 'auto' && detail !== 'low' && detail !== 'high') throw invalid(`${at}.detail`, `\`${at}.detail\` must be auto, low or high.`);
  return { type: 'image_url', image_url: isSet(detail) ? { url: part.image_url, detail: detail as 'auto' | 'low' | 'high' } : { url: part.image_url } };
}

function filePart(part: Record<string, unknown>, at: string): ChatContentPart {
  if (isSet(part.file_id) || isSet(part.file_url)) {
    throw invalid(`${at}.file_id`, `Files by \`file_id\` or \`file_url\` are not supported: the gateway keeps no files. Send the file inline as file_data.`);
  }
  if (typeof part.file_data !== 'string' || part.file_data.length === 0) throw invalid(`${at}.file_data`, `\`${at}.file_data\` must be the file as a data: URL.`);
  if (isSet(part.filename) && typeof part.filename !== 'string') throw invalid(`${at}.filename`, `\`${at}.filename\` must be a string.`);
  return { type: 'file', file: isSet(part.filename) ? { filename: part.filename, file_data: part.file_data } : { file_data: part.file_data } };
}

function functionCall(item: Record<string, unknown>, at: string, tools: ToolSet): ChatToolCall {
  const callId = requiredString(item, 'call_id', at);
  const name = requiredString(item, 'name', at);
  if (typeof item.arguments !== 'string') throw invalid(`${at}.arguments`, `\`${at}.arguments\` must be a string (the arguments as JSON).`);
  return { id: callId, type: 'function', function: { name: tools.chatName(name, item.namespace), arguments: item.arguments } };
}

function customCall(item: Record<string, unknown>, at: string, tools: ToolSet): ChatToolCall {
  const callId = requiredString(item, 'call_id', at);
  const name = requiredString(item, 'name', at);
  if (typeof item.input !== 'string') throw invalid(`${at}.input`, `\`${at}.input\` must be a string.`);
  return { id: callId, type: 'function', function: { name: tools.chatName(name, item.namespace), arguments: JSON.stringify({ input: item.input }) } };
}

/** The assistant message the call joins or opens. */
function addCall(messages: ChatMessage[], call: ChatToolCall): ChatMessage {
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    // The calls of one model turn, with its text if it had some: one chat assistant message.
    if (Array.isArray(last.tool_calls)) last.tool_calls.push(call);
    else last.tool_calls = [call];
    return last;
  }
  const message: ChatMessage = { role: 'assistant', content: null, tool_calls: [call] };
  messages.push(message);
  return message;
}

function functionCallOutput(item: Record<string, unknown>, at: string): ChatMessage {
  const callId = requiredString(item, 'call_id', at);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', tool_call_id: callId, content: output };
  if (!Array.isArray(output)) throw invalid(`${at}.output`, `\`${at}.output\` must be a string or a list of input_text parts.`);
  const texts: string[] = [];
  for (let j = 0; j < output.length; j++) {
    const part: unknown = output[j];
    const partAt = `${at}.output[${j}]`;
    // A chat tool message holds text only.
    if (!isObject(part) || part.type !== 'input_text' || typeof part.text !== 'string') {
      throw invalid(partAt, `\`${partAt}\` must be an input_text part: a function's output is text here.`);
    }
    texts.push(part.text);
  }
  return { role: 'tool', tool_call_id: callId, content: texts.join('') };
}

function requiredString(item: Record<string, unknown>, field: string, at: string): string {
  const value = item[field];
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${at}.${field}`, `\`${at}.${field}\` must be a non-empty string.`);
  return value;
}
