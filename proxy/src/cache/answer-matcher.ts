import type { CacheMode, RedisKeys } from '@gateway/shared';
import type { RecalledParse } from '../pipeline/context.js';
import { EntryNames } from './cache-key.js';

/**
 * How a project's cache mode finds a request's answer: the seam a semantic cache would plug into
 * (docs/caching.md "Semantic caching"). `exact`, the one matcher built, names one entry per
 * request: the project, the endpoint and the hash of the canonical body. A semantic matcher would
 * embed the prompt, look up its nearest stored questions in an index of its own under the
 * project's hash tag, and name those entries; it would need this method to return a promise (the
 * lookup step already waits on Redis). Replay, single flight, accounting and records stay the same.
 */
export interface AnswerMatcher {
  readonly mode: Exclude<CacheMode, 'off'>;
  /** The entry this request's answer is stored under and looked up at; `raw` is the body's bytes as sent. */
  entryName(projectId: string, endpoint: string, body: unknown, raw: Buffer | null): string;
  /**
   * The entry name and the kept parse of a body sent before byte for byte, before this one is
   * parsed (`cacheRecall`); null when there is none. A semantic matcher names entries from the
   * parsed prompt, so it has none to give.
   */
  recall(projectId: string, endpoint: string, raw: Buffer): { name: string; parse: RecalledParse } | null;
  /** Keeps the parse of a request answered from the cache, for `recall`. */
  keep(projectId: string, endpoint: string, raw: Buffer, parse: RecalledParse): void;
}

export function exactMatcher(keys: RedisKeys): AnswerMatcher {
  const names = new EntryNames((projectId, endpoint, hash) => keys.cacheEntry(projectId, endpoint, hash));
  return {
    mode: 'exact',
    entryName: (projectId, endpoint, body, raw) => names.of(projectId, endpoint, body, raw),
    recall: (projectId, endpoint, raw) => names.recall(projectId, endpoint, raw),
    keep: (projectId, endpoint, raw, parse) => names.keep(projectId, endpoint, raw, parse),
  };
}
