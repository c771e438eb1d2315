import { randomFillSync } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562 §5.7) for record and request ids, made on every request: 48 bits of Unix
 * milliseconds, a 12-bit counter in `rand_a` (Method 1 of §6.2: ids made in one millisecond by this
 * process sort in the order they were made), and 62 random bits from the operating system's
 * CSPRNG, read 4 KiB at a time. The `uuid` package makes the same ids at about six times the cost
 * (an entropy refill every 16 ids, per-call state objects), which showed in the proxy's profile.
 */

/** The two lower-case hex digits of each byte, as character codes: byte b at 2b and 2b + 1. */
const HEX_CODES = Buffer.from(Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).join(''), 'latin1');
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

let lastMs = -1;
let counter = 0;
/**
 * The id being written, `xxxxxxxx-xxxx-7ccc-vrrr-rrrrrrrrrrrr`: the millisecond's part is written
 * once per millisecond, the rest per id, then read out as one string. Joining fourteen strings
 * made a chain V8 had to flatten at the id's first use: about three times the garbage.
 */
const text = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');

function randomBytes(count: number): number {
  if (poolAt + count > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += count;
  return at;
}

function hexAt(byte: number, at: number): void {
  text[at] = HEX_CODES[byte * 2]!;
  text[at + 1] = HEX_CODES[byte * 2 + 1]!;
}

export function uuidV7(now = Date.now()): string {
  if (now > lastMs) {
    setMillisecond(now);
    // A random start below the middle: room for 2,048 ids in the millisecond before it carries.
    const at = randomBytes(2);
    counter = ((pool[at]! << 8) | pool[at + 1]!) & 0x7ff;
  } else if (++counter > 0xfff) {
    // 4,096 ids in one millisecond (or the clock stepped back): borrow the next millisecond, so
    // order still holds; the clock catches up within milliseconds.
    setMillisecond(lastMs + 1);
    counter = 0;
  }
  const at = randomBytes(8);
  const p = pool;
  // rand_a: the counter's 12 bits after the version digit.
  text[15] = HEX_CODES[(counter >> 8) * 2 + 1]!;
  hexAt(counter & 0xff, 16);
  // The variant (0b10) over the first random byte.
  hexAt((p[at]! & 0x3f) | 0x80, 19);
  hexAt(p[at + 1]!, 21);
  for (let i = 2; i < 8; i++) hexAt(p[at + i]!, 20 + 2 * i);
  return text.toString('latin1', 0, 36);
}

function setMillisecond(ms: number): void {
  lastMs = ms;
  // 48 bits: the top 16 from the division, the low 32 from the remainder.
  const high = Math.floor(ms / 0x100000000);
  const low = ms - high * 0x100000000;
  hexAt((high >> 8) & 0xff, 0);
  hexAt(high & 0xff, 2);
  hexAt(low >>> 24, 4);
  hexAt((low >>> 16) & 0xff, 6);
  hexAt((low >>> 8) & 0xff, 9);
  hexAt(low & 0xff, 11);
}
