import { randomFillSync } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562 §5.7) for record and request ids, made on every request: 48 bits of Unix
 * milliseconds, a 12-bit counter in `rand_a` (Method 1 of §6.2: ids made in one millisecond by this
 * process sort in the order they were made), and 62 random bits from the operating system's
 * CSPRNG, read 4 KiB at a time. The `uuid` package makes the same ids at about six times the cost
 * (an entropy refill every 16 ids, per-call state objects), which showed in the proxy's profile.
 */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

let lastMs = -1;
/** `xxxxxxxx-xxxx-7` for lastMs. */
let prefix = '';
let counter = 0;

function randomBytes(count: number): number {
  if (poolAt + count > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += count;
  return at;
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
  return (
    prefix +
    HEX[counter >> 8]![1]! +
    HEX[counter & 0xff]! +
    '-' +
    HEX[(p[at]! & 0x3f) | 0x80]! +
    HEX[p[at + 1]!]! +
    '-' +
    HEX[p[at + 2]!]! +
    HEX[p[at + 3]!]! +
    HEX[p[at + 4]!]! +
    HEX[p[at + 5]!]! +
    HEX[p[at + 6]!]! +
    HEX[p[at + 7]!]!
  );
}

function setMillisecond(ms: number): void {
  lastMs = ms;
  const hex = ms.toString(16).padStart(12, '0');
  prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
}
