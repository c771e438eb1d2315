import { normaliseFinishReason } from '@gateway/shared';
import type { StreamMeta } from './adapter.js';

/**
 * Reads one OpenAI-format chunk for what the gateway bills (usage, finish reason, an output
 * estimate for streams cut short) and decides whether the client sees it. What is forwarded is
 * the provider's own text. Most chunks of a stream carry a piece of content and nothing the
 * gateway must act on: those are recognised by a scan of their text and never parsed (inside JSON
 * strings every quote is escaped, so a quoted key found in the text is a key). Any other chunk
 * (a finish reason, usage, an error, or a layout the scan does not know) is parsed once.
 */
export function newStreamMeta(): StreamMeta {
  return { usage: null, estimatedOutput: 0, finishReason: null, failed: false };
}

/** Returns the data to forward, or null to hold the chunk back (a usage chunk nobody asked for). */
export function inspectChunk(data: string, meta: StreamMeta, clientWantsUsage: boolean): string | null {
  if (isContentOnly(data)) {
    meta.estimatedOutput += estimateTokens(stringLength(data, '"content":"') + stringLength(data, '"arguments":"'));
    return data;
  }
  let chunk: { choices?: unknown; error?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null };
  try {
    chunk = JSON.parse(data) as typeof chunk;
  } catch {
    return data;
  }
  if (typeof chunk !== 'object' || chunk === null) return data;
  if (chunk.error !== undefined && chunk.error !== null) {
    meta.failed = true;
    return null;
  }
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as Record<string, unknown>[]) : [];
  for (const choice of choices) {
    const finish = choice.finish_reason;
    if (typeof finish === 'string') {
      meta.finishReason = normaliseFinishReason(finish);
      // A reason the gateway has no name for is kept as the provider said it.
      if (meta.finishReason === 'other') meta.rawFinishReason = finish;
    }
    const delta = choice.delta as { content?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] } | undefined;
    if (delta) {
      if (typeof delta.content === 'string') meta.estimatedOutput += estimateTokens(delta.content.length);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const args = call.function?.arguments;
          if (typeof args === 'string') meta.estimatedOutput += estimateTokens(args.length);
        }
      }
    }
  }
  const usage = chunk.usage;
  if (usage && typeof usage === 'object') {
    const input = toCount(usage.prompt_tokens);
    meta.usage = { input, output: toCount(usage.completion_tokens), cached: Math.min(input, toCount(usage.prompt_tokens_details?.cached_tokens)) };
    if (choices.length === 0 && !clientWantsUsage) return null;
  }
  return data;
}

const FINISH = '"finish_reason":';

/** A chunk with no finish reason, usage or error, in the compact layout providers send. */
function isContentOnly(data: string): boolean {
  if (data.includes('"error"')) return false;
  const usage = data.indexOf('"usage":');
  if (usage >= 0 && !data.startsWith('null', usage + 8)) return false;
  let at = data.indexOf(FINISH);
  if (at < 0) return false;
  while (at >= 0) {
    if (!data.startsWith('null', at + FINISH.length)) return false;
    at = data.indexOf(FINISH, at + FINISH.length);
  }
  return true;
}

/** Length of the JSON string value after `key` (escapes counted as written), 0 when absent. */
/** Length of the JSON string value after `key` (escapes counted as written), found by a scan, not a parse. */
export function stringLength(data: string, key: string): number {
  const at = data.indexOf(key);
  if (at < 0) return 0;
  const start = at + key.length;
  let end = data.indexOf('"', start);
  while (end > 0 && isEscaped(data, end)) end = data.indexOf('"', end + 1);
  return end < 0 ? 0 : end - start;
}

function isEscaped(data: string, quote: number): boolean {
  let slashes = 0;
  for (let i = quote - 1; i >= 0 && data.charCodeAt(i) === 0x5c; i--) slashes++;
  return slashes % 2 === 1;
}

/** About four characters a token for English text; only used when the provider sent no count. */
export function estimateTokens(chars: number): number {
  return chars === 0 ? 0 : Math.max(1, Math.ceil(chars / 4));
}

export function toCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}
