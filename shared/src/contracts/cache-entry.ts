import { Packr } from 'msgpackr';
import { FINISH_REASONS, type FinishReason } from './usage-record.js';
import { ContractError } from './version.js';

/**
 * One response-cache entry (DESIGN §7 "Response cache"), written by the proxy that called the
 * provider and read by every proxy at RedisKeys.cacheEntry: the answer's body as the gateway
 * renders it from, and what a hit records (the provider that served it, its counts, what it cost).
 * MessagePack rather than JSON: the body is bytes that need no escaping, and a hit decodes it
 * without a JSON parse.
 */
export type CacheEntryKind =
  /** An OpenAI chat.completion: rendered in the endpoint's protocol (Chat, Messages, Responses). */
  | 'chat'
  /** An Anthropic message from a provider that speaks Messages natively (a /v1/messages answer). */
  | 'anthropic-message'
  /** An OpenAI embeddings list, sent as it is. */
  | 'embeddings';

export interface CacheEntry {
  v: 1;
  kind: CacheEntryKind;
  /** Unix ms at which the answer was stored (`age` is counted from it). */
  created_at: number;
  body: Buffer;
  provider: string;
  /** Tokens the provider call used, shown to the client as the answer's usage. */
  usage: { input: number; output: number; cached: number };
  finish_reason: FinishReason;
  raw_finish_reason: string | null;
  /** What the provider call cost (a hit's `saved_usd`); null when the model has no price. */
  cost_usd: number | null;
}

const NAME = 'CacheEntry';
const KINDS: readonly CacheEntryKind[] = ['chat', 'anthropic-message', 'embeddings'];
const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeCacheEntry(entry: CacheEntry): Buffer {
  return packr.pack(entry);
}

function count(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ContractError(NAME, `${field} must be a non-negative integer`);
  return value;
}

export function decodeCacheEntry(raw: Buffer): CacheEntry {
  let obj: unknown;
  try {
    obj = packr.unpack(raw);
  } catch {
    throw new ContractError(NAME, 'not MessagePack');
  }
  if (typeof obj !== 'object' || obj === null) throw new ContractError(NAME, 'not an object');
  const e = obj as Record<string, unknown>;
  if (e.v !== 1) throw new ContractError(NAME, `unsupported version ${String(e.v)} (this build reads 1)`);
  if (!KINDS.includes(e.kind as CacheEntryKind)) throw new ContractError(NAME, 'unknown kind');
  if (!(e.body instanceof Uint8Array)) throw new ContractError(NAME, 'body must be bytes');
  if (typeof e.provider !== 'string') throw new ContractError(NAME, 'provider must be a string');
  if (!FINISH_REASONS.includes(e.finish_reason as FinishReason)) throw new ContractError(NAME, 'unknown finish_reason');
  const usage = (e.usage ?? {}) as Record<string, unknown>;
  const cost = e.cost_usd;
  if (cost !== null && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0)) throw new ContractError(NAME, 'cost_usd must be a non-negative number or null');
  return {
    v: 1,
    kind: e.kind as CacheEntryKind,
    created_at: count(e.created_at, 'created_at'),
    body: Buffer.isBuffer(e.body) ? e.body : Buffer.from(e.body.buffer, e.body.byteOffset, e.body.byteLength),
    provider: e.provider,
    usage: { input: count(usage.input, 'usage.input'), output: count(usage.output, 'usage.output'), cached: count(usage.cached, 'usage.cached') },
    finish_reason: e.finish_reason as FinishReason,
    raw_finish_reason: typeof e.raw_finish_reason === 'string' ? e.raw_finish_reason : null,
    cost_usd: cost as number | null,
  };
}
