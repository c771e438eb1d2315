import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { holdStreams, openHeldStream, type HeldStream } from '../../bench/src/harness/hold.js';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { spawnMockUpstream, spawnNode, waitForOutput, type Child, type MockUpstreamProcess } from '../../test-support/processes.js';
import { clearPrefix, projectTestKey, testRedis } from '../../test-support/redis.js';

/**
 * A providers file that sets no connection options: one worker holds many more concurrent streams
 * to one provider than the former defaults allowed (256 connections plus 1,024 waiting), every one
 * answered 200 with its first event while all the others are still open.
 */
const STREAMS = 2_000;

let upstream: MockUpstreamProcess;
let proxy: Child;
let redis: Redis;
let origin: string;
let capacityLine: string;
const prefix = testRedisPrefix('capacity');
const keys = new RedisKeys(prefix);
const held: HeldStream[] = [];

beforeAll(async () => {
  redis = testRedis();
  upstream = await spawnMockUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'gw-capacity-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`);
  proxy = spawnNode('proxy/dist/main.js', [], {
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    GATEWAY_CONFIG: providers,
    LOG_LEVEL: 'info',
  });
  const [, port] = await waitForOutput(proxy, /"port":(\d+)[^\n]*"msg":"proxy listening"/, 30_000);
  [capacityLine] = await waitForOutput(proxy, /[^\n]*"streams":\d+[^\n]*concurrent streams[^\n]*/, 10_000);
  origin = `http://127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  for (const h of held) h.close();
  await proxy?.kill('SIGTERM');
  await upstream?.stop();
  await clearPrefix(redis, prefix);
  await redis.quit();
}, 60_000);

describe('concurrent streams with no connection options', () => {
  it('says at start how many streams the open-files limit allows', () => {
    expect(capacityLine).toMatch(/"open_files_limit":\d+/);
  });

  it(`answers ${STREAMS} concurrent slow streams, every one 200`, async () => {
    const key = await projectTestKey(redis, keys);
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }], mock: { hang_after_chunks: 1 } });
    const headers = { 'content-type': 'application/json', 'x-api-key': key.key };
    // openHeldStream resolves only on a 200 whose first SSE event has arrived; anything else fails it.
    const failures = await holdStreams(held, STREAMS, 200, () => openHeldStream(origin, headers, body, 60_000));
    expect(failures).toBe(0);
    expect(held).toHaveLength(STREAMS);
    const stats = await upstream.stats();
    expect(stats.streams).toBeGreaterThanOrEqual(STREAMS);
  }, 180_000);
});
