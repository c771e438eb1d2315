import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, NO_RATE_LIMITS, RedisKeys, type ProjectPolicy, type RateLimits } from '@gateway/shared';
import { testRedisPrefix } from '../../../test-support/databases.js';
import { clearPrefix, testRedis } from '../../../test-support/redis.js';
import { RateLimiter } from './rate-limiter.js';

let redis: Redis;
let prefix: string;
let keys: RedisKeys;
const limiters: RateLimiter[] = [];

beforeAll(() => {
  redis = testRedis();
  prefix = testRedisPrefix('rate');
  keys = new RedisKeys(prefix);
});

afterAll(async () => {
  for (const l of limiters) await l.close();
  await clearPrefix(redis, prefix);
  await redis.quit();
});

function limiter(client: Redis = redis, syncMs = 20): RateLimiter {
  const l = new RateLimiter(client, keys, { syncMs });
  l.start();
  limiters.push(l);
  return l;
}

let projects = 0;
function policy(limits: Partial<RateLimits>): ProjectPolicy {
  return { v: 1, id: `project-${++projects}`, quota_tokens: null, quota_period: 'total', rate_limits: { ...NO_RATE_LIMITS, ...limits }, allowed_models: null, max_tokens_cap: null };
}

async function admit(l: RateLimiter, p: ProjectPolicy, keyId: string, tokens = 1, now = Date.now()): Promise<boolean> {
  const outcome = l.check(p, keyId, tokens, now);
  const refused = outcome instanceof Promise ? await outcome : outcome;
  if (refused !== null) {
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused.code).toBe('RATE_LIMITED');
  }
  return refused === null;
}

describe('rate limits', () => {
  it('admits requests far from a limit without asking Redis, and reports them on the next sync', async () => {
    const p = policy({ project_rpm: 10_000 });
    const l = limiter();
    const minute = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < 100; i++) expect(l.check(p, 'k1', 1, Date.now())).toBeNull();
    // Counted locally only: nothing reached Redis yet (the check never returned a promise).
    const windowKey = keys.rateWindow(p.id, 'project', 'requests', p.id, minute);
    expect(Number((await redis.get(windowKey)) ?? 0)).toBeLessThan(100);
    await sleep(80);
    expect(Number(await redis.get(windowKey))).toBe(100);
  });

  it('admits exactly up to a limit on one proxy, then refuses with Retry-After', async () => {
    const p = policy({ key_rpm: 300 });
    const l = limiter();
    const now = Date.now();
    let admitted = 0;
    for (let i = 0; i < 400; i++) if (await admit(l, p, 'k2', 1, now)) admitted++;
    expect(admitted).toBe(300);
    const refused = l.check(p, 'k2', 1, now);
    const err = (refused instanceof Promise ? await refused : refused) as GatewayError;
    expect(err.retryAfter).toBeGreaterThan(0);
    expect(err.message).toContain('requests per minute for this key (300)');
  });

  it('counts tokens per minute, refusing a request that would pass the limit', async () => {
    const p = policy({ project_tpm: 1_000 });
    const l = limiter();
    expect(await admit(l, p, 'k3', 600)).toBe(true);
    expect(await admit(l, p, 'k3', 600)).toBe(false);
    expect(await admit(l, p, 'k3', 400)).toBe(true);
  });

  it('holds a limit across replicas whose admissions per sync interval stay within the margin', async () => {
    // Two proxies, each admitting one request per millisecond or so: far less than the margin
    // (20 % of 1,000) per 5 ms sync, so together they never pass the limit.
    const p = policy({ project_rpm: 1_000 });
    const a = limiter(redis, 5);
    const second = redis.duplicate();
    const b = limiter(second, 5);
    const now = Date.now();
    let admitted = 0;
    for (let i = 0; i < 700; i++) {
      if (await admit(a, p, 'ka', 1, now)) admitted++;
      if (await admit(b, p, 'kb', 1, now)) admitted++;
      await sleep(1);
    }
    expect(admitted).toBe(1_000);
    await b.close();
    await second.quit();
  });

  it('starts a new window each minute', async () => {
    const p = policy({ key_rpm: 2 });
    const l = limiter();
    const minute = (Math.floor(Date.now() / 60_000) + 10) * 60_000;
    expect(await admit(l, p, 'k4', 1, minute)).toBe(true);
    expect(await admit(l, p, 'k4', 1, minute + 1)).toBe(true);
    expect(await admit(l, p, 'k4', 1, minute + 2)).toBe(false);
    expect(await admit(l, p, 'k4', 1, minute + 60_000)).toBe(true);
  });

  it('enforces the limits on its own counts while Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const p = policy({ key_rpm: 3 });
    const l = limiter(dead);
    const now = Date.now();
    const outcomes: boolean[] = [];
    for (let i = 0; i < 5; i++) outcomes.push(await admit(l, p, 'k5', 1, now));
    expect(outcomes).toEqual([true, true, true, false, false]);
    dead.disconnect();
  });
});
