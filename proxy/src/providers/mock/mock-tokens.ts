/**
 * The mock provider's tokenizer, simple enough to count by hand: a token is a run of ASCII letters,
 * up to three digits, up to three ASCII punctuation marks, or any other single character (an
 * accented letter, a CJK character, an emoji), with the whitespace before it. Whitespace at the end
 * of a text is no token. `max_tokens` cuts on these tokens and usage counts them, so what the mock
 * answers and what it bills always agree.
 */
const TOKEN = /\s*(?:[A-Za-z]+|[0-9]{1,3}|[!-\/:-@\[-`{-~]{1,3}|\S)/gu;

/** An image part costs what OpenAI bills for a low-detail image. */
export const MOCK_IMAGE_TOKENS = 85;
/** Framing of a message, and the reply's priming, as OpenAI bills them. */
const MESSAGE_TOKENS = 3;
const REQUEST_TOKENS = 3;

/** The text cut into tokens; joined, they give the text back without its trailing whitespace. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(text: string): number {
  let n = 0;
  TOKEN.lastIndex = 0;
  while (TOKEN.exec(text) !== null) n++;
  return n;
}

/** Prompt tokens of a chat body: message text, names, tool calls and tool definitions. */
export function countPromptTokens(body: Readonly<Record<string, unknown>>): number {
  let n = REQUEST_TOKENS;
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m)) continue;
    n += MESSAGE_TOKENS + stringTokens(m.name);
    if (typeof m.content === 'string') n += countTokens(m.content);
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (!isObject(part)) continue;
        if (part.type === 'text') n += stringTokens(part.text);
        else if (part.type === 'image_url') n += MOCK_IMAGE_TOKENS;
      }
    }
    if (Array.isArray(m.tool_calls)) {
      for (const call of m.tool_calls) {
        const fn = isObject(call) && isObject(call.function) ? call.function : {};
        n += stringTokens(fn.name) + stringTokens(fn.arguments);
      }
    }
  }
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : {};
    n += stringTokens(fn.name) + stringTokens(fn.description) + (fn.parameters === undefined ? 0 : countTokens(JSON.stringify(fn.parameters) ?? ''));
  }
  return n;
}

function stringTokens(value: unknown): number {
  return typeof value === 'string' ? countTokens(value) : 0;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
