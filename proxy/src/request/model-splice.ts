import { jsonBytes } from './json-bytes.js';
/**
 * The client's body bytes with only the top-level `model` renamed, for a request that goes to its
 * provider as it came: the provider's model id written in place of the client's, every other byte
 * as the client sent it, so the body is neither re-serialised nor walked. The key is found by a
 * byte search; when it is not found exactly once outside a string (a tool schema with a property
 * named `model`, say), or its value is not the string the parsed body holds, the answer is null and
 * the caller serialises the body instead.
 */
const KEY = Buffer.from('"model"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

/** Whether the quote at `at` ends a string's escape (an odd run of backslashes before it). */
function escaped(raw: Buffer, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= 0 && raw[i] === BACKSLASH; i--) n++;
  return n % 2 === 1;
}

/** Where the value of the one `"model":` key starts (its opening quote), or -1. */
function modelValue(raw: Buffer): number {
  let found = -1;
  for (let at = raw.indexOf(KEY); at >= 0; at = raw.indexOf(KEY, at + KEY.length)) {
    // `"model"` ending a longer string (`"my \"model"`) is no key of its own.
    if (escaped(raw, at) || escaped(raw, at + KEY.length - 1)) continue;
    let i = at + KEY.length;
    while (isSpace(raw[i])) i++;
    if (raw[i] !== COLON) continue;
    if (found >= 0) return -1;
    i++;
    while (isSpace(raw[i])) i++;
    found = i;
  }
  return found;
}

/** The end (one past the closing quote) of the JSON string opening at `start`, or -1. */
function stringEnd(raw: Buffer, start: number): number {
  for (let i = raw.indexOf(QUOTE, start + 1); i >= 0; i = raw.indexOf(QUOTE, i + 1)) {
    if (!escaped(raw, i)) return i + 1;
  }
  return -1;
}

/** `raw` with its top-level `model` (which the parsed body says is `current`) set to `model`; null when that cannot be done safely. */
export function spliceModel(raw: Buffer, current: string, model: string): Buffer | null {
  if (current === model) return raw;
  const start = modelValue(raw);
  if (start < 0 || raw[start] !== QUOTE) return null;
  const end = stringEnd(raw, start);
  if (end < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8', start, end));
  } catch {
    return null;
  }
  // The one key found is the top-level one only if it holds what the parsed body does.
  if (value !== current) return null;
  return Buffer.concat([raw.subarray(0, start), jsonBytes(model), raw.subarray(end)]);
}
