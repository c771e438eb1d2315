import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { projectTestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/** SIGTERM's drain: stop accepting, let streams finish, cut what outlives the deadline, flush records. */
let upstream: MockUpstreamProcess;
let h: Harness;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  h = await startHarness('drain', `providers:\n  - name: upstream\n    type: openai\n    base_url: ${upstream.baseUrl}\n    models: [gpt-4o-mini]\n`, {
    DRAIN_TIMEOUT_MS: '1500',
  });
});

afterAll(async () => {
  await h?.stop();
  await upstream?.stop();
});

function stream(key: string, chunks: number, gap: number): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, mock: { chunks, gap_ms: gap } }),
  });
}

describe('drain', () => {
  it('finishes short streams, cuts long ones at the deadline, refuses new work and keeps every record', async () => {
    const key = await projectTestKey(h.redis, h.keys);
    const short = await stream(key.key, 10, 30);
    const long = await stream(key.key, 1_000, 30);
    expect(short.status).toBe(200);
    expect(long.status).toBe(200);
    const draining = h.proxy.drain();
    const [shortText, longText] = await Promise.all([short.text(), long.text()]);
    expect(shortText).toContain('[DONE]');
    expect(longText).toContain('"code":"UNAVAILABLE"');
    expect(longText).not.toContain('[DONE]');
    await draining;
    // A new connection is refused (connections already open close when the process exits).
    await expect(
      new Promise((resolve, reject) => get(`${h.url}/healthz`, { agent: false }, resolve).on('error', reject)),
    ).rejects.toThrow(/ECONNREFUSED/);
    const { audit, usage } = await h.records();
    expect(audit.map((a) => a.outcome).sort()).toEqual(['error', 'success']);
    expect(usage).toHaveLength(2);
  });
});
