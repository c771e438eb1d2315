import { toCount } from '../stream-inspector.js';

/**
 * What the gateway needs from a non-streaming Chat Completions answer — the usage counts and the
 * first choice's finish reason — read without parsing the whole answer: the body is forwarded as
 * the provider sent it, so building its object tree would be work thrown away. Inside JSON strings
 * every quote is escaped, so `"usage"` and `"finish_reason"` with their quotes can only be keys.
 */
export interface CompletionFacts {
  input: number;
  output: number;
  cached: number;
  finishReason: string | null;
}

const USAGE = Buffer.from('"usage"');
const FINISH = Buffer.from('"finish_reason"');
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const SPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

/** null when the body is not a JSON object. */
export function scanCompletion(body: Buffer): CompletionFacts | null {
  let start = 0;
  while (start < body.length && SPACE.has(body[start]!)) start++;
  let end = body.length - 1;
  while (end > start && SPACE.has(body[end]!)) end--;
  if (body[start] !== OPEN || body[end] !== CLOSE) return null;

  let input = 0;
  let output = 0;
  let cached = 0;
  const usageAt = body.lastIndexOf(USAGE);
  if (usageAt >= 0) {
    const open = body.indexOf(OPEN, usageAt + USAGE.length);
    const close = open < 0 ? -1 : matchingBrace(body, open);
    if (close > 0) {
      try {
        const usage = JSON.parse(body.toString('utf8', open, close + 1)) as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null };
        input = toCount(usage.prompt_tokens);
        output = toCount(usage.completion_tokens);
        cached = Math.min(input, toCount(usage.prompt_tokens_details?.cached_tokens));
      } catch {
        // A malformed usage object counts as none; the prompt estimate stands in.
      }
    }
  }
  return { input, output, cached, finishReason: finishReason(body) };
}

/** The usage object holds numbers and nested objects only, so braces need no string tracking. */
function matchingBrace(body: Buffer, open: number): number {
  let depth = 0;
  for (let i = open; i < body.length; i++) {
    const c = body[i];
    if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) return i;
  }
  return -1;
}

function finishReason(body: Buffer): string | null {
  const at = body.indexOf(FINISH);
  if (at < 0) return null;
  let i = at + FINISH.length;
  while (i < body.length && (SPACE.has(body[i]!) || body[i] === 0x3a)) i++;
  if (body[i] !== QUOTE) return null;
  const close = body.indexOf(QUOTE, i + 1);
  return close < 0 ? null : body.toString('latin1', i + 1, close);
}
