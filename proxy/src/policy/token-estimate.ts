/**
 * The prompt tokens a chat request may be billed, estimated before it is forwarded: its quota
 * reservation, its rate-limit charge, and its input count when a provider sends none. Only what a
 * provider bills is counted (message text, tool definitions, tool-call arguments, per-message and
 * per-request framing), never the body's JSON keys, and it is meant never to count fewer tokens
 * than the provider does.
 *
 * Text is weighed character by character in one walk, with no tokenizer and no vocabulary. The
 * weights were fitted so that the estimate is never below the o200k_base or cl100k_base count
 * (GPT-4o, GPT-4) on a corpus of English prose, Markdown, JavaScript, TypeScript, Python, JSON, 18
 * languages and random base64 and hex, cut into 60- and 400-character pieces, then raised 3 %.
 * Lower-case letters weigh least because they merge into word tokens; capitals, digits and
 * punctuation mostly start tokens of their own; each change of character class (the start of a
 * word, a number, a run of punctuation) weighs a little more. Digits are counted by runs instead:
 * both tokenizers split a number into pieces of at most three digits, never merged with a letter
 * or a space, so each started group of three weighs one token (and a space before a number is a
 * token of its own). In exchange English prose is overcounted by about 1.7×.
 * token-estimate.test.ts holds real tokenizations it must stay above.
 */
const LOWER = 0.3;
const UPPER = 0.66;
/** Each group of up to three digits of a number (the digits are weighed as groups, not one by one). */
const DIGIT_GROUP = 1;
const SPACE = 0.2;
const CONTROL = 0.04;
const PUNCT = 0.57;
/** Two-byte UTF-8 characters: accented Latin, Greek, Cyrillic, Hebrew, Arabic. */
const TWO_BYTE = 1;
/** Three-byte UTF-8 characters: CJK, Indic, Thai, symbols. */
const THREE_BYTE = 1.48;
/** Each half of a surrogate pair (emoji and other astral characters): 2.14 a character. */
const SURROGATE = 1.07;
const CLASS_CHANGE = 0.24;
/** Added once to each piece of text: short texts vary most. */
const TEXT_SLACK = 4;

/** Framing of one message: role and separators (OpenAI bills 3, 4 with a name). */
export const MESSAGE_TOKENS = 4;
/** The reply's priming (OpenAI bills 3). */
export const REQUEST_TOKENS = 3;
/** Framing of one tool definition (the namespace and type declaration around it). */
export const TOOL_TOKENS = 9;
/** Framing of one tool call in an assistant message. */
export const TOOL_CALL_TOKENS = 7;
/**
 * An image part, whatever its size: GPT-4o bills at most 1,445 for one image (85 + 170 per
 * 512-pixel tile, up to 8 tiles). Models that bill images at a higher rate may use more.
 */
export const IMAGE_TOKENS = 1_500;

// Character classes of the UTF-16 code units 0-127; above that, by UTF-8 length.
const C_LOWER = 0;
const C_UPPER = 1;
const C_DIGIT = 2;
const C_SPACE = 3;
const C_CONTROL = 4;
const C_PUNCT = 5;
const C_TWO = 6;
const C_THREE = 7;
const C_SURROGATE = 8;
const WEIGHTS = [LOWER, UPPER, 0, SPACE, CONTROL, PUNCT, TWO_BYTE, THREE_BYTE, SURROGATE];
/**
 * Added where a number meets a character of another class, by that class. Nothing merges into a
 * number, so the word, space, punctuation or line break next to it is a token of its own however
 * short, which its weight alone (made for text where such characters merge) does not reach:
 * `w123` is two tokens, `, 12` two, `1,234.5` five. Before: the class precedes the number; after:
 * it follows it (a space after a number merges into the next word, so it gets nothing).
 */
const EDGE_BEFORE_DIGITS = [0.5, 0.35, 0, 0.8, 0.72, 0.2, 0, 0, 0];
const EDGE_AFTER_DIGITS = [0.5, 0.35, 0, 0, 0.72, 0.2, 0, 0, 0];

const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  ASCII_CLASS[c] =
    c >= 97 && c <= 122 ? C_LOWER
    : c >= 65 && c <= 90 ? C_UPPER
    : c >= 48 && c <= 57 ? C_DIGIT
    : c === 32 ? C_SPACE
    : c < 32 || c === 127 ? C_CONTROL
    : C_PUNCT;
}

/** Tokens one piece of text may be billed, at least 1 when it is not empty. */
export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  let weight = 0;
  let previous = -1;
  /** Digits of the number being read, 0 outside one. */
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cls = code < 128 ? (ASCII_CLASS[code] as number) : code < 0x800 ? C_TWO : code >= 0xd800 && code <= 0xdfff ? C_SURROGATE : C_THREE;
    if (cls === C_DIGIT) {
      // Every third digit starts a token: 1-3 digits weigh one group, 4-6 two, and so on.
      if (digits % 3 === 0) weight += DIGIT_GROUP;
      digits++;
    } else {
      weight += WEIGHTS[cls] as number;
      digits = 0;
    }
    if (cls !== previous) {
      weight += CLASS_CHANGE;
      if (cls === C_DIGIT) {
        if (previous >= 0) weight += EDGE_BEFORE_DIGITS[previous] as number;
      } else if (previous === C_DIGIT) weight += EDGE_AFTER_DIGITS[cls] as number;
    }
    previous = cls;
  }
  return Math.ceil(weight + TEXT_SLACK);
}

/** The prompt tokens of an OpenAI chat-completion body (validated: `messages` is an array). */
export function estimatePromptTokens(body: Readonly<Record<string, unknown>>): number {
  let tokens = REQUEST_TOKENS;
  const messages = body.messages;
  if (Array.isArray(messages)) for (const message of messages) tokens += messageTokens(message);
  const tools = body.tools;
  if (Array.isArray(tools)) for (const tool of tools) tokens += toolTokens(tool);
  return tokens;
}

function messageTokens(message: unknown): number {
  if (!isObject(message)) return MESSAGE_TOKENS;
  let tokens = MESSAGE_TOKENS + contentTokens(message.content);
  if (typeof message.name === 'string') tokens += estimateTextTokens(message.name);
  const calls = message.tool_calls;
  if (Array.isArray(calls)) {
    for (const call of calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : null;
      tokens += TOOL_CALL_TOKENS + (fn === null ? 0 : stringTokens(fn.name) + stringTokens(fn.arguments));
    }
  }
  return tokens;
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return estimateTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let tokens = 0;
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' || part.type === 'input_text') tokens += stringTokens(part.text);
    else if (part.type === 'image_url' || part.type === 'input_image') tokens += IMAGE_TOKENS;
    // Audio, files and parts yet to come: whatever text they carry, counted as text.
    else tokens += leafTokens(part, 3);
  }
  return tokens;
}

function toolTokens(tool: unknown): number {
  if (!isObject(tool)) return TOOL_TOKENS;
  const fn = isObject(tool.function) ? tool.function : tool;
  let tokens = TOOL_TOKENS + stringTokens(fn.name) + stringTokens(fn.description);
  // The schema is rendered into the prompt in a form shorter than its JSON; the JSON bounds it.
  if (fn.parameters !== undefined) tokens += estimateTextTokens(JSON.stringify(fn.parameters) ?? '');
  return tokens;
}

function stringTokens(value: unknown): number {
  return typeof value === 'string' ? estimateTextTokens(value) : 0;
}

function leafTokens(value: unknown, depth: number): number {
  if (typeof value === 'string') return estimateTextTokens(value);
  if (depth === 0 || typeof value !== 'object' || value === null) return 0;
  let tokens = 0;
  for (const v of Array.isArray(value) ? value : Object.values(value)) tokens += leafTokens(v, depth - 1);
  return tokens;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
