import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RedisClient, RedisKeys } from '@gateway/shared';

/**
 * The key the aggregate endpoint's session ids are signed with (HMAC-SHA256), shared by every
 * proxy through Redis: the first proxy that finds no secret makes one (SET NX), the others read
 * it, so any replica verifies a session another began. A Redis that lost its data gets a new
 * secret from the next proxy that starts; a proxy that fails to verify an id reads the secret
 * again (at most once a second) and keeps the one it had as well, so sessions begun under either
 * still verify, and the rest are refused as unknown (the client initializes again).
 */
const RELOAD_MS = 1_000;

interface StoredSecret {
  v: 1;
  secret: string;
}

export class SessionSigner {
  private keys: Buffer[];
  private reloadedAt = 0;

  private constructor(
    private readonly redis: RedisClient,
    private readonly names: RedisKeys,
    first: Buffer,
  ) {
    this.keys = [first];
  }

  static async load(redis: RedisClient, names: RedisKeys): Promise<SessionSigner> {
    return new SessionSigner(redis, names, await readOrMake(redis, names));
  }

  sign(payload: string): string {
    return mac(this.keys[0]!, payload);
  }

  /** Whether `signature` is one of ours over `payload`; the secret is read again when it is not (see above). */
  async verify(payload: string, signature: string): Promise<boolean> {
    if (this.matches(payload, signature)) return true;
    const now = Date.now();
    if (now - this.reloadedAt < RELOAD_MS) return false;
    this.reloadedAt = now;
    const current = await readOrMake(this.redis, this.names).catch(() => null);
    if (current === null || current.equals(this.keys[0]!)) return false;
    this.keys = [current, this.keys[0]!];
    return this.matches(payload, signature);
  }

  private matches(payload: string, signature: string): boolean {
    const given = Buffer.from(signature, 'base64url');
    for (const key of this.keys) {
      const expected = Buffer.from(mac(key, payload), 'base64url');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
    return false;
  }
}

function mac(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

async function readOrMake(redis: RedisClient, names: RedisKeys): Promise<Buffer> {
  const made: StoredSecret = { v: 1, secret: randomBytes(32).toString('base64url') };
  await redis.set(names.mcpSessionSecret, JSON.stringify(made), 'NX');
  const raw = await redis.get(names.mcpSessionSecret);
  const stored = raw === null ? made : (JSON.parse(raw) as Partial<StoredSecret>);
  if (stored.v !== 1 || typeof stored.secret !== 'string' || stored.secret.length < 32) throw new Error('the MCP session secret in Redis is not readable');
  return Buffer.from(stored.secret, 'base64url');
}
