import { invalid as refuse, isObject } from '../json-fields.js';
import type { GeminiContent, GeminiPart } from '../../providers/gemini/gemini-wire.js';

/**
 * OpenAI `messages` into Gemini's `systemInstruction` and `contents`. System and developer
 * messages become the system instruction (in order); `user` stays `user`, `assistant` becomes
 * `model`, and `tool` results become `functionResponse` parts of a `user` turn, named after the
 * call they answer. Gemini wants turns to alternate, so consecutive turns of one role are merged.
 */
export interface GeminiConversation {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
}

/**
 * Gemini 3 models refuse a replayed function call without the thought signature the model gave
 * it, and OpenAI's format has no place to carry one back. Google documents this value for calls
 * whose signature is not known (history from another model or rebuilt by the client).
 */
export const UNKNOWN_SIGNATURE = 'skip_thought_signature_validator';

/** What Gemini reads images as; a URL's type is guessed from its extension. */
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif' };
const AUDIO_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

type Message = Record<string, unknown>;

export function toGeminiConversation(messages: readonly unknown[]): GeminiConversation {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  /** Tool call id → function name, from the assistant messages seen so far (the latest wins). */
  const callNames = new Map<string, string>();

  const push = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((raw, i) => {
    const message = raw as Message;
    const at = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOnly(message.content, at);
        if (text !== '') system.push({ text });
        return;
      }
      case 'user':
        return push('user', userParts(message.content, at));
      case 'assistant':
        return push('model', assistantParts(message, at, callNames));
      case 'tool':
        return push('user', [toolResult(message, at, callNames)]);
      default:
        throw refuse(`${at}.role`, `\`${at}.role\` ${JSON.stringify(message.role)} cannot be sent to Gemini.`);
    }
  });

  if (contents.length === 0) throw refuse('messages', 'Gemini needs at least one user or assistant message with content.');
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}

/** A content that may only hold text (system, developer and tool messages). */
function textOnly(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  const texts: string[] = [];
  (content as unknown[]).forEach((part, j) => {
    const p = part as Record<string, unknown>;
    if (p.type !== 'text' || typeof p.text !== 'string') throw refuse(`${at}.content[${j}]`, `\`${at}.content[${j}]\` must be a text part here.`);
    texts.push(p.text);
  });
  return texts.join('\n');
}

function userParts(content: unknown, at: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: GeminiPart[] = [];
  (content as unknown[]).forEach((part, j) => {
    const p = part as Record<string, unknown>;
    const where = `${at}.content[${j}]`;
    switch (p.type) {
      case 'text':
        if (typeof p.text !== 'string') throw refuse(`${where}.text`, `\`${where}.text\` must be a string.`);
        if (p.text !== '') parts.push({ text: p.text });
        return;
      case 'image_url':
        parts.push(imagePart(p.image_url, `${where}.image_url`));
        return;
      case 'input_audio': {
        const audio = p.input_audio as { data?: unknown; format?: unknown } | undefined;
        const mimeType = typeof audio?.format === 'string' ? AUDIO_TYPES[audio.format] : undefined;
        if (mimeType === undefined) throw refuse(`${where}.input_audio.format`, `\`${where}.input_audio.format\` must be wav or mp3.`);
        if (typeof audio?.data !== 'string') throw refuse(`${where}.input_audio.data`, `\`${where}.input_audio.data\` must be base64 audio.`);
        parts.push({ inlineData: { mimeType, data: audio.data } });
        return;
      }
      case 'file': {
        const file = p.file as { file_data?: unknown } | undefined;
        if (typeof file?.file_data !== 'string') throw refuse(`${where}.file`, `\`${where}.file\` must carry \`file_data\` (a data URL); file ids are not available with Gemini.`);
        parts.push({ inlineData: dataUrl(file.file_data, `${where}.file.file_data`) });
        return;
      }
      default:
        throw refuse(`${where}.type`, `\`${where}.type\` ${JSON.stringify(p.type)} cannot be sent to Gemini.`);
    }
  });
  return parts;
}

/**
 * A data URL becomes inline data. An http(s) URL is given to Gemini to fetch (`fileData`), which
 * needs its MIME type: guessed from the extension, and refused when there is none to guess from.
 */
function imagePart(image: unknown, at: string): GeminiPart {
  const url = typeof image === 'string' ? image : isObject(image) ? image.url : undefined;
  if (typeof url !== 'string') throw refuse(`${at}.url`, `\`${at}.url\` must be a string.`);
  if (url.startsWith('data:')) return { inlineData: dataUrl(url, `${at}.url`) };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse(`${at}.url`, `\`${at}.url\` must be an http(s) URL or a data URL.`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw refuse(`${at}.url`, `\`${at}.url\` must be an http(s) URL or a data URL.`);
  const extension = /\.([A-Za-z0-9]+)$/.exec(parsed.pathname)?.[1]?.toLowerCase();
  const mimeType = extension === undefined ? undefined : IMAGE_TYPES[extension];
  if (mimeType === undefined) {
    throw refuse(`${at}.url`, `\`${at}.url\` must end in .png, .jpg, .jpeg, .webp, .heic or .heif for Gemini to fetch it; send other images as a data URL.`);
  }
  return { fileData: { mimeType, fileUri: url } };
}

function dataUrl(url: string, at: string): { mimeType: string; data: string } {
  const comma = url.indexOf(',');
  const header = comma < 0 ? '' : url.slice(5, comma);
  const [mimeType = '', ...flags] = header.split(';');
  if (comma < 0 || !/^[\w.+-]+\/[\w.+-]+$/.test(mimeType)) throw refuse(at, `\`${at}\` must be a data URL with a MIME type.`);
  const payload = url.slice(comma + 1);
  if (flags.includes('base64')) return { mimeType, data: payload };
  let bytes: Buffer;
  try {
    bytes = Buffer.from(decodeURIComponent(payload), 'utf8');
  } catch {
    throw refuse(at, `\`${at}\` is not a valid data URL.`);
  }
  return { mimeType, data: bytes.toString('base64') };
}

function assistantParts(message: Message, at: string, callNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const content = message.content;
  if (typeof content === 'string') {
    if (content !== '') parts.push({ text: content });
  } else if (Array.isArray(content)) {
    content.forEach((part, j) => {
      const p = part as Record<string, unknown>;
      const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : undefined;
      if (typeof text !== 'string') throw refuse(`${at}.content[${j}]`, `\`${at}.content[${j}]\` must be a text or refusal part.`);
      if (text !== '') parts.push({ text });
    });
  }
  const calls = message.tool_calls;
  if (calls === undefined || calls === null) return parts;
  if (!Array.isArray(calls)) throw refuse(`${at}.tool_calls`, `\`${at}.tool_calls\` must be an array.`);
  calls.forEach((call, j) => {
    const where = `${at}.tool_calls[${j}]`;
    const fn = isObject(call) ? call.function : undefined;
    if (!isObject(call) || (call.type !== undefined && call.type !== 'function') || !isObject(fn) || typeof fn.name !== 'string') {
      throw refuse(where, `\`${where}\` must be a function call with a name.`);
    }
    const args = parseArguments(fn.arguments, `${where}.function.arguments`);
    if (typeof call.id === 'string') callNames.set(call.id, fn.name);
    const part: GeminiPart = { functionCall: { name: fn.name, args } };
    // Gemini puts the signature on the first call of a step; so does the replay.
    if (j === 0) part.thoughtSignature = UNKNOWN_SIGNATURE;
    parts.push(part);
  });
  return parts;
}

function parseArguments(raw: unknown, at: string): Record<string, unknown> {
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw !== 'string') throw refuse(at, `\`${at}\` must be a JSON string.`);
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    throw refuse(at, `\`${at}\` is not valid JSON.`);
  }
  if (!isObject(args)) throw refuse(at, `\`${at}\` must encode a JSON object.`);
  return args;
}

/**
 * A tool result as a `functionResponse`: Gemini wants an object, so a result that is a JSON
 * object goes as it is and anything else as `{content: "<the text>"}`.
 */
function toolResult(message: Message, at: string, callNames: Map<string, string>): GeminiPart {
  const id = message.tool_call_id;
  const name = typeof id === 'string' ? callNames.get(id) : undefined;
  if (name === undefined) throw refuse(`${at}.tool_call_id`, `\`${at}.tool_call_id\` must name a tool call of an earlier assistant message.`);
  const text = textOnly(message.content, at);
  let response: Record<string, unknown> = { content: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) response = parsed;
  } catch {
    // Plain text: kept as content.
  }
  return { functionResponse: { name, response } };
}
