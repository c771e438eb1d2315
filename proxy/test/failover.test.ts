import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, UsageRecord } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Routing across providers: a model served by several providers fails over on retryable
 * failures before anything reached the client, never after a stream started; weighted routes
 * spread traffic; a provider failing in a row is skipped for a cooldown. The upstreams speak
 * OpenAI's wire format, each answering by the upstream model name (conformance scenarios).
 */
let first: RunningWireMock;
let second: RunningWireMock;
let pages: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: OpenAI;

const provider = (name: string, url: string, models: string) => `  - name: ${name}
    type: openai
    base_url: ${url}/v1
    api_key: sk-${name}-provider-secret
    timeout_ms: 300
    models: ${models}
`;

beforeAll(async () => {
  first = await startOpenAiWireMock();
  second = await startOpenAiWireMock();
  // A load balancer's error page, longer than the gateway reads, whose body never ends.
  pages = await startWireMock((_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.write(`<html>${'x'.repeat(20_000)}`);
  });
  h = await startHarness(
    'failover',
    `providers:
${provider('down', 'http://127.0.0.1:1', '[{ id: refused, upstream: conf-text }, { id: dead-everywhere, upstream: conf-text }]')}
${provider('pages', 'PAGES_URL', '[{ id: long-page, upstream: conf-text }]')}
${provider('first', first.baseUrl, '[{ id: limited, upstream: conf-429 }, { id: failing, upstream: conf-500 }, { id: slow, upstream: conf-slow }, { id: broken-stream, upstream: conf-stream-error }, { id: refusing, upstream: conf-400 }, { id: all-fail, upstream: conf-500 }]')}
${provider('second', second.baseUrl, '[refused, limited, failing, slow, broken-stream, refusing, { id: all-fail, upstream: conf-429 }, { id: priced, upstream: conf-text, price: { input: 1, output: 2, cached_input: 0.5 } }, { id: long-page, upstream: conf-text }]')}
  - name: heavy
    type: mock
    models: [spread]
  - name: light
    type: mock
    models: [spread]
routes:
  spread: { strategy: weighted, weights: { heavy: 3, light: 1 } }
cooldown: { failures: 5, base_ms: 60000, max_ms: 60000 }
`.replace('PAGES_URL', pages.baseUrl),
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await first?.close();
  await second?.close();
  await pages?.close();
});

async function recordsOf(requestId: string): Promise<{ audit: AuditEvent[]; usage: UsageRecord[] }> {
  const { audit, usage } = await h.records();
  return { audit: audit.filter((a) => a.request_id === requestId), usage: usage.filter((u) => u.request_id === requestId) };
}

async function ask(model: string): Promise<{ status: number; requestId: string; body: { choices?: { message: { content: string } }[]; error?: { code: string } } }> {
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, requestId: res.headers.get('x-request-id') as string, body: (await res.json()) as never };
}

describe('failover', () => {
  for (const [model, why] of [
    ['refused', 'refuses connections'],
    ['limited', 'answers 429'],
    ['failing', 'answers 500'],
    ['slow', 'does not answer in time'],
  ] as const) {
    it(`serves from the next provider when the first ${why}, with one audit event and one usage record`, async () => {
      const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(res.data.choices[0]?.message.content).toBe('Hello there');
      const { audit, usage } = await recordsOf(res.response.headers.get('x-request-id') as string);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ outcome: 'success', status: 200, provider: 'second', endpoint: 'chat.completions', attempts: 2, providers: [model === 'refused' ? 'down' : 'first', 'second'] });
      expect(usage).toHaveLength(1);
      expect(usage[0]).toMatchObject({ provider: 'second', finish_reason: 'stop', tokens: { input: 11, output: 2, total: 13, cached: 3 }, cost_usd: null, endpoint: 'chat.completions' });
    });
  }

  it('fails over past an error page too long to read, giving up only that connection', async () => {
    const before = pages.aborted();
    const res = await ask('long-page');
    expect(res.status).toBe(200);
    expect(res.body.choices?.[0]?.message.content).toBe('Hello there');
    await expect.poll(() => pages.aborted()).toBeGreaterThan(before);
  });

  it('prices a request from the serving model entry, cached prompt tokens at their own price', async () => {
    const res = await ask('priced');
    expect(res.status).toBe(200);
    const { usage, audit } = await recordsOf(res.requestId);
    // 8 uncached prompt tokens at $1, 3 cached at $0.5 and 2 output at $2, per million.
    expect(usage[0]?.cost_usd).toBeCloseTo(13.5e-6, 12);
    expect(audit[0]).toMatchObject({ attempts: 1, providers: ['second'] });
  });

  it('never retries a stream that has started', async () => {
    const before = second.requests();
    const stream = await client.chat.completions.create({ model: 'broken-stream', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toThrow();
    expect(text).toBe('Hello');
    expect(second.requests()).toBe(before);
  });

  it("does not fail over on the provider's 400: the request itself is at fault", async () => {
    const before = second.requests();
    const res = await ask('refusing');
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_REQUEST');
    expect(second.requests()).toBe(before);
  });

  it('answers with the last failure when every provider fails, billing nothing to the last one tried', async () => {
    const res = await ask('all-fail');
    expect(res.status).toBe(429);
    const { audit, usage } = await recordsOf(res.requestId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'error', status: 429, provider: 'second' });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'second', finish_reason: 'error', tokens: { total: 0 } });
  });

  it('skips a provider in its cooldown after consecutive failures', async () => {
    const metricsUrl = `http://127.0.0.1:${h.proxy.metricsPort}/metrics`;
    // "down" refuses connections; it has failed for "refused" above and fails for this model too.
    for (let i = 0; i < 6; i++) expect((await ask('refused')).status).toBe(200);
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/gateway_upstream_cooldowns\{provider="down"\} 1/);
    expect(metrics).toMatch(/gateway_upstream_cooling\{provider="down"\} 1/);
    const retries = Number(/gateway_upstream_retries_total\{provider="down"\} (\d+)/.exec(metrics)?.[1]);
    // Skipped now: further requests go straight to the healthy provider.
    for (let i = 0; i < 5; i++) expect((await ask('refused')).status).toBe(200);
    const after = await (await fetch(metricsUrl)).text();
    expect(Number(/gateway_upstream_retries_total\{provider="down"\} (\d+)/.exec(after)?.[1])).toBe(retries);
  });
});

describe('weighted routing', () => {
  it('spreads 1,000 requests within ±10 % of the weights (3:1)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => ask('spread')));
      for (const r of batch) {
        expect(r.status).toBe(200);
        ids.push(r.requestId);
      }
    }
    const wanted = new Set(ids);
    const { usage } = await h.records();
    const served = usage.filter((u) => wanted.has(u.request_id));
    expect(served).toHaveLength(1000);
    const heavy = served.filter((u) => u.provider === 'heavy').length;
    expect(heavy).toBeGreaterThanOrEqual(750 - 75);
    expect(heavy).toBeLessThanOrEqual(750 + 75);
  });

  it('lists each model id once', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('spread');
    expect(ids).toContain('refused');
  });
});
