import { Errors, GatewayError, type ProjectPolicy, type RedisClient, type RedisKeys } from '@gateway/shared';
import { RateWindow } from './rate-window.js';

/**
 * Requests and tokens per minute, per key and per project, shared by every replica through Redis
 * but without a Redis round trip per request. Each proxy counts admissions locally and sends its
 * counts to Redis every `syncMs` (one pipeline for every window in use), learning the other
 * replicas' totals in the answer. A request is admitted locally while the window, as this proxy
 * last saw it, stays below its limit by a safety margin — the larger of 20 % of the limit and 50
 * requests' worth. Past that margin (and always for small limits) the request is checked in Redis
 * itself, exactly, as every request used to be. So a window overshoots only when the other
 * replicas together admit more than that margin within one sync interval (docs/quotas.md).
 * When Redis cannot be reached, each proxy enforces the limits on its own counts.
 *
 * Fixed one-minute windows: a client can burst up to twice a limit across a window edge, the usual
 * trade for no per-request state in Redis. Tokens count the request's reservation.
 */

// KEYS: window counters, all of one project (one hash slot). ARGV: per window (pending, add, limit), then the TTL in seconds.
// Adds every window's pending count (already admitted), then counts `add` in all windows, or, if
// one would pass its limit, in none. Returns {full, total1, total2, …}: full is 0 when admitted,
// else the 1-based index of the first full window.
const RATE_LUA = `
local n = #KEYS
local totals = {}
for i = 1, n do
  local pending = tonumber(ARGV[3 * i - 2])
  if pending > 0 then totals[i] = redis.call('INCRBY', KEYS[i], pending) else totals[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
  redis.call('EXPIRE', KEYS[i], ARGV[3 * n + 1])
end
local full = 0
for i = 1, n do
  if totals[i] + tonumber(ARGV[3 * i - 1]) > tonumber(ARGV[3 * i]) then full = i break end
end
if full == 0 then
  for i = 1, n do
    local add = tonumber(ARGV[3 * i - 1])
    if add > 0 then totals[i] = redis.call('INCRBY', KEYS[i], add) end
  end
end
local out = {full}
for i = 1, n do out[i + 1] = totals[i] end
return out
`;

type RateCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

const TTL_SECONDS = 120;
/** Fraction of a limit checked exactly in Redis rather than locally. */
const EXACT_FRACTION = 0.2;
/** Requests' worth of a limit checked exactly in Redis (so small limits are always exact). */
const EXACT_REQUESTS = 50;

interface KeyWindows {
  policy: ProjectPolicy;
  /** In check order: key requests, project requests, key tokens, project tokens (those configured). */
  windows: RateWindow[];
  /** Whether each window counts tokens (else one per request). */
  tokens: boolean[];
}

export interface RateLimiterOptions {
  /** How often local counts are sent to Redis and other replicas' counts learnt. */
  syncMs?: number;
}

export class RateLimiter {
  private readonly command: RateCommand;
  private readonly byKey = new Map<string, KeyWindows>();
  private readonly windows = new Map<string, RateWindow>();
  private readonly syncMs: number;
  private timer: NodeJS.Timeout | undefined;
  private syncing = false;
  private prunedMinute = -1;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
    options: RateLimiterOptions = {},
  ) {
    redis.defineCommand('gatewayRateLimit', { lua: RATE_LUA });
    this.command = (redis as unknown as { gatewayRateLimit: RateCommand }).gatewayRateLimit.bind(redis);
    this.syncMs = options.syncMs ?? 20;
  }

  start(): void {
    this.timer = setInterval(() => void this.sync(), this.syncMs);
    this.timer.unref();
  }

  /** Sends what is counted and stops. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.sync();
  }

  /**
   * null when admitted (and counted) at once, a GatewayError to answer with, or a promise of either
   * when the request is close enough to a limit to be checked in Redis.
   */
  check(policy: ProjectPolicy, keyId: string, tokens: number, now: number): null | GatewayError | Promise<GatewayError | null> {
    const r = policy.rate_limits;
    if (r.key_rpm === null && r.project_rpm === null && r.key_tpm === null && r.project_tpm === null) return null;
    const entry = this.windowsFor(policy, keyId);
    const minute = Math.floor(now / 60_000);
    let exact = false;
    for (let i = 0; i < entry.windows.length; i++) {
      const window = entry.windows[i]!;
      window.roll(minute);
      window.touched = true;
      const add = entry.tokens[i] ? tokens : 1;
      const margin = Math.max(window.limit * EXACT_FRACTION, add * EXACT_REQUESTS);
      if (window.seen + add > window.limit - margin) exact = true;
    }
    if (!exact) {
      for (let i = 0; i < entry.windows.length; i++) entry.windows[i]!.pending += entry.tokens[i] ? tokens : 1;
      return null;
    }
    return this.checkInRedis(entry, tokens, minute, now);
  }

  /** Drops the windows of a project whose policy changed (its limits may be new). */
  forgetProject(projectId: string): void {
    for (const [keyId, entry] of this.byKey) if (entry.policy.id === projectId) this.byKey.delete(keyId);
  }

  private windowsFor(policy: ProjectPolicy, keyId: string): KeyWindows {
    const cached = this.byKey.get(keyId);
    if (cached !== undefined && cached.policy === policy) return cached;
    const r = policy.rate_limits;
    const windows: RateWindow[] = [];
    const tokens: boolean[] = [];
    const add = (scope: 'key' | 'project', kind: 'requests' | 'tokens', id: string, limit: number | null, label: string) => {
      if (limit === null) return;
      const base = this.keys.rateWindow(policy.id, scope, kind, id, 0).slice(0, -1);
      const name = `${base}|${limit}`;
      let window = this.windows.get(name);
      if (window === undefined) {
        window = new RateWindow(base, limit, `${label} (${limit})`);
        this.windows.set(name, window);
      }
      windows.push(window);
      tokens.push(kind === 'tokens');
    };
    add('key', 'requests', keyId, r.key_rpm, 'requests per minute for this key');
    add('project', 'requests', policy.id, r.project_rpm, 'requests per minute for this project');
    add('key', 'tokens', keyId, r.key_tpm, 'tokens per minute for this key');
    add('project', 'tokens', policy.id, r.project_tpm, 'tokens per minute for this project');
    const entry = { policy, windows, tokens };
    this.byKey.set(keyId, entry);
    return entry;
  }

  private async checkInRedis(entry: KeyWindows, tokens: number, minute: number, now: number): Promise<GatewayError | null> {
    const { windows } = entry;
    const args: (string | number)[] = windows.map((w) => w.redisKey());
    const sent = windows.map((w) => w.take());
    for (let i = 0; i < windows.length; i++) args.push(sent[i]!, entry.tokens[i] ? tokens : 1, windows[i]!.limit);
    args.push(TTL_SECONDS);
    let full: number;
    try {
      const answer = await this.command(windows.length, ...args);
      full = Number(answer[0]);
      for (let i = 0; i < windows.length; i++) windows[i]!.settle(minute, sent[i]!, Number(answer[i + 1]));
    } catch {
      // Redis away: every proxy enforces the limits on what it has seen itself.
      for (let i = 0; i < windows.length; i++) windows[i]!.restore(minute, sent[i]!);
      full = 0;
      for (let i = 0; i < windows.length; i++) {
        if (windows[i]!.seen + (entry.tokens[i] ? tokens : 1) > windows[i]!.limit) {
          full = i + 1;
          break;
        }
      }
      if (full === 0) for (let i = 0; i < windows.length; i++) windows[i]!.pending += entry.tokens[i] ? tokens : 1;
    }
    if (full === 0) return null;
    const window = windows[full - 1]!;
    const retryAfter = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    return Errors.rateLimited(window.label, retryAfter);
  }

  /** Every window counted or looked at since the last sync, sent back to back on one connection. */
  private async sync(): Promise<void> {
    if (this.syncing) return;
    const minute = Math.floor(Date.now() / 60_000);
    if (minute !== this.prunedMinute) this.prune(minute);
    const batch: { window: RateWindow; minute: number; sent: number }[] = [];
    for (const window of this.windows.values()) {
      if (window.pending === 0 && (!window.touched || window.minute !== minute)) continue;
      batch.push({ window, minute: window.minute, sent: window.take() });
    }
    if (batch.length === 0) return;
    this.syncing = true;
    try {
      await Promise.all(
        batch.map(({ window, minute: m, sent }) =>
          this.command(1, window.redisKey(), sent, 0, Number.MAX_SAFE_INTEGER, TTL_SECONDS).then(
            (answer) => window.settle(m, sent, Number(answer[1])),
            () => window.restore(m, sent),
          ),
        ),
      );
    } finally {
      this.syncing = false;
    }
  }

  /**
   * Forgets windows unused for over a minute, and every key holding one of them (it is rebuilt on
   * its next request), so that no key keeps a window the sync no longer sees.
   */
  private prune(minute: number): void {
    this.prunedMinute = minute;
    for (const [keyId, entry] of this.byKey) if (entry.windows.some((w) => w.minute < minute - 1)) this.byKey.delete(keyId);
    for (const [name, window] of this.windows) if (window.minute < minute - 1) this.windows.delete(name);
  }
}
