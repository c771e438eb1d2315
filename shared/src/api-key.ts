import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys look like `gw_<43 base64url chars>`: a recognisable prefix (secret scanners and humans
 * can tell what leaked) and 256 bits from the OS CSPRNG. Only SHA-256 of the key is stored: keys
 * are high-entropy, so a slow password hash would buy nothing and cost every request.
 */
export const API_KEY_PREFIX = 'gw_';
const KEY_BYTES = 32;
/** Characters of the key kept for display (`gw_AbCdEfGh`), far too few to guess the rest. */
const DISPLAY_CHARS = API_KEY_PREFIX.length + 8;

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = API_KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
  return { key, hash: hashApiKey(key), prefix: key.slice(0, DISPLAY_CHARS) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Cheap shape check so obvious garbage never costs a hash or a Redis lookup. */
export function looksLikeApiKey(key: string): boolean {
  return key.length > API_KEY_PREFIX.length && key.length <= 256 && key.startsWith(API_KEY_PREFIX);
}
