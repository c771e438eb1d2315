import { ContractError } from './version.js';

/**
 * A project's response-cache setting (DESIGN §7 "Response cache"): `off` (the default) or `exact`
 * (an answer to a request with the same canonical body is replayed), and how long an entry lives.
 * Stored with the project, projected in its policy only when on, so a proxy reads one field to
 * know that a project does not cache.
 */
export type CacheMode = 'off' | 'exact';

export interface CacheSetting {
  mode: CacheMode;
  ttl_seconds: number;
}

export const DEFAULT_CACHE_TTL_SECONDS = 3600;
/** Longest entry life a project may ask for: 30 days. */
export const MAX_CACHE_TTL_SECONDS = 30 * 24 * 3600;

export const CACHE_OFF: CacheSetting = Object.freeze({ mode: 'off', ttl_seconds: DEFAULT_CACHE_TTL_SECONDS }) as CacheSetting;

/** The setting as the proxy reads it from a policy; absent or null is off; anything malformed is a contract error. */
export function decodeCacheSetting(name: string, value: unknown): CacheSetting | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ContractError(name, 'cache must be an object or null');
  const { mode, ttl_seconds: ttl } = value as { mode?: unknown; ttl_seconds?: unknown };
  if (mode !== 'off' && mode !== 'exact') throw new ContractError(name, 'cache.mode must be off or exact');
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_CACHE_TTL_SECONDS) {
    throw new ContractError(name, `cache.ttl_seconds must be an integer in 1..${MAX_CACHE_TTL_SECONDS}`);
  }
  return mode === 'off' ? null : { mode, ttl_seconds: ttl };
}
