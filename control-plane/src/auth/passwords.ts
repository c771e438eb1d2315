import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes with Node's scrypt (memory-hard, no native add-on). Stored as
 * `scrypt$N$r$p$salt$hash` so the cost can be raised without breaking old hashes: a hash made at
 * a lower cost still verifies, and the sign-in that proves the password replaces it
 * (`needsRehash`).
 *
 * The cost is OWASP's current recommendation for scrypt (Password Storage Cheat Sheet): N = 2^17,
 * r = 8, p = 1, which needs 128 × N × r = 128 MiB per hash.
 */
export const SCRYPT_COST = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_LEN = 32;
/** Node refuses scrypt above `maxmem` (32 MiB by default); the cost above needs 128 MiB plus a little. */
const MAX_MEM = 2 * 128 * SCRYPT_COST.N * SCRYPT_COST.r;
/** Stored parameters are read back from the database: refuse anything that would exhaust memory. */
const MAX_STORED_N = 2 ** 20;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = SCRYPT_COST;
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LEN, { N, r, p, maxmem: MAX_MEM });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

interface StoredHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parseHash(stored: string): StoredHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [, n, r, p, saltText, hashText] = parts as [string, string, string, string, string, string];
  const parsed = { N: Number(n), r: Number(r), p: Number(p), salt: Buffer.from(saltText, 'base64url'), hash: Buffer.from(hashText, 'base64url') };
  if (![parsed.N, parsed.r, parsed.p].every(Number.isSafeInteger) || parsed.N > MAX_STORED_N || parsed.r > 32 || parsed.p > 16) return null;
  return parsed;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (parsed === null) return false;
  const actual = await scrypt(password, parsed.salt, parsed.hash.length, {
    N: parsed.N,
    r: parsed.r,
    p: parsed.p,
    maxmem: Math.max(MAX_MEM, 2 * 128 * parsed.N * parsed.r * parsed.p),
  });
  return actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
}

/** Whether a hash (already verified) was made at a lower cost than today's and should be replaced. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  if (parsed === null) return true;
  return parsed.N < SCRYPT_COST.N || parsed.r < SCRYPT_COST.r || parsed.p < SCRYPT_COST.p || parsed.hash.length < KEY_LEN;
}

/** The hash of an account made by single sign-on: it matches no password (it is not a scrypt hash). */
export const NO_PASSWORD_HASH = '!single-sign-on';

/** Whether the account has a password at all (accounts made by single sign-on have none). */
export function hasPassword(stored: string): boolean {
  return parseHash(stored) !== null;
}

/** A hash of a random password: compared against when the email is unknown, so timing does not tell. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
