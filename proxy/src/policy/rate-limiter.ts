import type { Redis } from 'ioredis';
import { GatewayError, type ProjectPolicy, type RedisKeys } from '@gateway/shared';

/**
 * Requests and tokens per minute, per key and per project, shared by every replica: one Lua call
 * checks every configured window and counts the request in all of them, or in none. Fixed
 * one-minute windows: a client can burst up to twice a limit across a window edge, which is the
 * usual trade for one round trip and no per-request memory. Projects without limits never reach
 * Redis here. Tokens count the request's reservation (prompt estimate plus max_tokens).
 */

// KEYS: the window counters; ARGV: limit1, add1, limit2, add2, …, then the TTL in seconds.
// Returns 0 when admitted (all counted), else the 1-based index of the first window that is full.
const RATE_LUA = `
local n = #KEYS
for i = 1, n do
  local current = tonumber(redis.call('GET', KEYS[i]) or '0')
  if current + tonumber(ARGV[2 * i]) > tonumber(ARGV[2 * i - 1]) then return i end
end
for i = 1, n do
  redis.call('INCRBY', KEYS[i], ARGV[2 * i])
  redis.call('EXPIRE', KEYS[i], ARGV[2 * n + 1])
end
return 0
`;

type RateCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number>;

const LABELS = ['requests per minute for this key', 'requests per minute for this project', 'tokens per minute for this key', 'tokens per minute for this project'];

export class RateLimiter {
  private readonly command: RateCommand;

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    redis.defineCommand('gatewayRateLimit', { lua: RATE_LUA });
    this.command = (redis as unknown as { gatewayRateLimit: RateCommand }).gatewayRateLimit.bind(redis);
  }

  /** null when the project has no rate limit; otherwise the check's outcome. */
  check(policy: ProjectPolicy, keyId: string, tokens: number, now: number): null | Promise<GatewayError | null> {
    const r = policy.rate_limits;
    if (r.key_rpm === null && r.project_rpm === null && r.key_tpm === null && r.project_tpm === null) return null;
    const minute = Math.floor(now / 60_000);
    const windows: { key: string; limit: number; add: number; label: string }[] = [];
    if (r.key_rpm !== null) windows.push({ key: this.keys.rateWindow('key', 'requests', keyId, minute), limit: r.key_rpm, add: 1, label: LABELS[0]! });
    if (r.project_rpm !== null) windows.push({ key: this.keys.rateWindow('project', 'requests', policy.id, minute), limit: r.project_rpm, add: 1, label: LABELS[1]! });
    if (r.key_tpm !== null) windows.push({ key: this.keys.rateWindow('key', 'tokens', keyId, minute), limit: r.key_tpm, add: tokens, label: LABELS[2]! });
    if (r.project_tpm !== null) windows.push({ key: this.keys.rateWindow('project', 'tokens', policy.id, minute), limit: r.project_tpm, add: tokens, label: LABELS[3]! });
    const args: (string | number)[] = windows.map((w) => w.key);
    for (const w of windows) args.push(w.limit, w.add);
    args.push(120);
    const retryAfter = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    return this.command(windows.length, ...args).then(
      (full) => {
        if (Number(full) === 0) return null;
        const window = windows[Number(full) - 1];
        return new GatewayError('RATE_LIMITED', `Rate limit reached: ${window?.label ?? 'limit'} (${window?.limit}). Retry in ${retryAfter} s.`, { retryAfter });
      },
      () => new GatewayError('UNAVAILABLE', 'Rate limits cannot be checked right now; retry shortly.', { retryAfter: 1 }),
    );
  }
}
