import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { inOneRateWindow } from '../../test-support/rate-window.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { openAiChat } from '../src/protocols/openai-chat/openai-chat.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';

/**
 * The response cache (DESIGN §7) end to end: a real control plane sets the project's cache, a real
 * proxy (uWebSockets.js, real Redis) answers the official SDKs from it on every endpoint, the
 * mock providers count the calls that reach them, and a real writer puts the records in Postgres.
 */
let upstream: MockUpstreamProcess;
let embedder: RunningWireMock;
let cp: ControlPlaneHarness;
let writer: Writer;
let proxy: Proxy;
let keys: RedisKeys;
let url: string;
let providersFile: string;
/** Largest body stored by this proxy: small, so the size bound is reachable with the mock's answers. */
const MAX_ENTRY = 4096;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  embedder = await startOpenAiWireMock();
  cp = await startControlPlane('response-cache');
  keys = new RedisKeys(cp.prefix);
  writer = await startWriter({ DATABASE_URL: cp.db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent', WRITER_PORT: '0' });
  const dir = mkdtempSync(join(tmpdir(), 'gw-cache-'));
  const providers = join(dir, 'providers.yaml');
  providersFile = providers;
  writeFileSync(
    providers,
    `providers:
  - name: upstream
    type: openai
    base_url: ${upstream.baseUrl}
    models: [{ id: gpt-4o-mini, price: { input: 1, output: 2, cached_input: 0.5 } }]
  - name: claude
    type: anthropic
    base_url: http://127.0.0.1:${upstream.port}
    models: [{ id: claude-x, price: { input: 3, output: 15, cached_input: 0.3 } }]
  - name: embedder
    type: openai
    base_url: ${embedder.baseUrl}/v1
    models: [{ id: embed, upstream: text-embedding-3-small, price: { input: 0.02, output: 0, cached_input: 0.02 } }]
`,
  );
  proxy = await startProxy({
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: cp.prefix,
    PROXY_PORT: '0',
    METRICS_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    GATEWAY_CONFIG: providers,
    LOG_LEVEL: 'silent',
    CACHE_MAX_ENTRY_BYTES: String(MAX_ENTRY),
  });
  url = `http://127.0.0.1:${proxy.port}`;
}, 60_000);

afterAll(async () => {
  await proxy?.drain();
  await writer?.close();
  await cp?.close();
  await embedder?.close();
  await upstream?.stop();
});

let projects = 0;
async function project(settings: Record<string, unknown> = { cache: { mode: 'exact', ttl_seconds: 600 } }): Promise<{ id: string; key: string; keyId: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `cache ${++projects}`, ...settings } });
  expect(created.status).toBe(201);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key, keyId: key.body.id };
}

async function upstreamCalls(): Promise<number> {
  return (await upstream.stats()).requests;
}

function post(path: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers }, body: JSON.stringify(body) });
}

const question = (n: number, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${n}` }], ...extra });

describe('chat completions', () => {
  it('answers the second identical request from the cache, whatever its key order, stream flag or user', async () => {
    const p = await project();
    const before = await upstreamCalls();
    const miss = await post('/v1/chat/completions', p.key, question(1, { temperature: 0 }));
    expect(miss.status).toBe(200);
    expect(miss.headers.get('x-gateway-cache')).toBe('miss');
    const missed = await miss.json();
    const hit = await post('/v1/chat/completions', p.key, { temperature: 0, user: 'someone', messages: [{ content: 'question 1', role: 'user' }], model: 'gpt-4o-mini' });
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-gateway-cache')).toBe('hit');
    expect(Number(hit.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(await hit.json()).toEqual(missed);
    expect(await upstreamCalls()).toBe(before + 1);
    // Another question is another entry.
    const other = await post('/v1/chat/completions', p.key, question(1, { temperature: 1 }));
    expect(other.headers.get('x-gateway-cache')).toBe('miss');
    await other.text();
  });

  it('replays a streamed miss to the openai client as a stream (usage chunk when asked) and as JSON, and the reverse', async () => {
    const p = await project();
    const client = new OpenAI({ apiKey: p.key, baseURL: `${url}/v1`, maxRetries: 0 });
    const before = await upstreamCalls();
    const streamed = async () => {
      const stream = await client.chat.completions.create({ ...question(2), stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming);
      let text = '';
      let usage: unknown = null;
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      return { text, usage, finish };
    };
    const first = await streamed();
    const second = await streamed();
    expect(second).toEqual(first);
    expect(first.text.length).toBeGreaterThan(0);
    expect(first.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    const whole = await client.chat.completions.create(question(2) as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    expect(whole.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(whole.data.choices[0]?.message.content).toBe(first.text);
    expect(await upstreamCalls()).toBe(before + 1);

    // A JSON miss served to a stream that did not ask for usage: no usage chunk.
    const json = await client.chat.completions.create(question(3) as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const raw = await post('/v1/chat/completions', p.key, question(3, { stream: true }));
    expect(raw.headers.get('x-gateway-cache')).toBe('hit');
    const sse = await raw.text();
    expect(sse.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(sse).not.toContain('"usage"');
    const text = sse
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(json.choices[0]?.message.content);
    expect(await upstreamCalls()).toBe(before + 2);
  });
});

describe('messages', () => {
  it('replays to the Anthropic client, translated and native, streamed and not', async () => {
    const p = await project();
    const client = new Anthropic({ apiKey: p.key, baseURL: url, maxRetries: 0 });
    for (const model of ['gpt-4o-mini', 'claude-x']) {
      const before = await upstreamCalls();
      const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: `hello ${model}` }] };
      const streamedMiss = await client.messages.stream(params).finalMessage();
      const streamedHit = client.messages.stream(params);
      const hitMessage = await streamedHit.finalMessage();
      expect(hitMessage.content).toEqual(streamedMiss.content);
      expect(hitMessage.stop_reason).toBe(streamedMiss.stop_reason);
      const json = await client.messages.create(params).withResponse();
      expect(json.response.headers.get('x-gateway-cache')).toBe('hit');
      expect(json.data.content).toEqual(streamedMiss.content);
      expect(await upstreamCalls(), model).toBe(before + 1);

      // JSON first, then the stream from it.
      const other = { ...params, messages: [{ role: 'user' as const, content: `again ${model}` }] };
      const whole = await client.messages.create(other);
      const replayed = await client.messages.stream(other).finalMessage();
      expect(replayed.content).toEqual(whole.content);
      expect(replayed.usage.output_tokens).toBe(whole.usage.output_tokens);
      expect(await upstreamCalls(), model).toBe(before + 2);
    }
  });
});

describe('responses', () => {
  it('replays to the openai client as Responses events and as a response object', async () => {
    const p = await project();
    const client = new OpenAI({ apiKey: p.key, baseURL: `${url}/v1`, maxRetries: 0 });
    const before = await upstreamCalls();
    const params = { model: 'gpt-4o-mini', input: 'tell me something' };
    const streamText = async () => {
      const stream = await client.responses.create({ ...params, stream: true });
      let text = '';
      let completed: OpenAI.Responses.Response | null = null;
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta') text += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      return { text, output: completed?.output_text ?? (completed as OpenAI.Responses.Response | null)?.output };
    };
    const first = await streamText();
    const second = await streamText();
    expect(second.text).toBe(first.text);
    expect(first.text.length).toBeGreaterThan(0);
    const whole = await client.responses.create(params);
    expect(whole.output_text).toBe(first.text);
    expect(await upstreamCalls()).toBe(before + 1);
  });
});

describe('embeddings', () => {
  it('answers the second identical request from the cache', async () => {
    const p = await project();
    const client = new OpenAI({ apiKey: p.key, baseURL: `${url}/v1`, maxRetries: 0 });
    const before = embedder.requests();
    const first = await client.embeddings.create({ model: 'embed', input: ['a', 'b'] }).withResponse();
    const second = await client.embeddings.create({ model: 'embed', input: ['a', 'b'] }).withResponse();
    expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(second.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(second.data.data).toEqual(first.data.data);
    expect(embedder.requests()).toBe(before + 1);
  });
});

describe('single flight', () => {
  it('makes one provider call for identical requests arriving together, and answers them all', async () => {
    const p = await project();
    const before = await upstreamCalls();
    const body = question(4, { mock: { delay_ms: 400 } });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post('/v1/chat/completions', p.key, i % 2 === 0 ? body : { ...body, stream: true })));
    const results = answers.map((r) => r.headers.get('x-gateway-cache'));
    expect(results.filter((r) => r === 'miss')).toHaveLength(1);
    expect(results.filter((r) => r === 'hit')).toHaveLength(5);
    for (const r of answers) expect(r.status).toBe(200);
    await Promise.all(answers.map((r) => r.text()));
    expect(await upstreamCalls()).toBe(before + 1);
  });

  it('lets the waiters call the provider themselves when the leader fails', async () => {
    const p = await project();
    const before = await upstreamCalls();
    const failing = post('/v1/chat/completions', p.key, question(5, { mock: { delay_ms: 300, status: 400 } }));
    // The same question with the same `mock` field: the second waits for the first, which fails.
    const waiting = post('/v1/chat/completions', p.key, question(5, { mock: { delay_ms: 300, status: 400 } }));
    const [a, b] = await Promise.all([failing, waiting]);
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
    expect(await upstreamCalls()).toBe(before + 2);
  });
});

describe('a question sent again byte for byte', () => {
  it("is answered from the parse its first hit kept, with records and replays of its own, until it may not read the cache or the answer is gone", async () => {
    const p = await project();
    const parse = vi.spyOn(openAiChat, 'parse');
    try {
      const body = question(14, { user: 'end-user-14' });
      const send = async (headers: Record<string, string> = {}) => {
        const r = await post('/v1/chat/completions', p.key, body, headers);
        return { status: r.status, cache: r.headers.get('x-gateway-cache'), id: r.headers.get('x-request-id') as string, text: await r.text() };
      };
      const before = await upstreamCalls();
      const miss = await send();
      const first = await send();
      expect(parse).toHaveBeenCalledTimes(2);
      // Parsed by no step: the hit before kept its parse.
      const again = await send();
      const third = await send({ 'cache-control': 'max-age=3600' });
      expect(parse).toHaveBeenCalledTimes(2);
      expect([miss.cache, first.cache, again.cache, third.cache]).toEqual(['miss', 'hit', 'hit', 'hit']);
      expect(again.text).toBe(first.text);
      expect(third.text).toBe(first.text);
      expect(await upstreamCalls()).toBe(before + 1);

      // The same bytes streamed by the SDK: its first hit parses, the next ones replay from the kept parse.
      const client = new OpenAI({ apiKey: p.key, baseURL: `${url}/v1`, maxRetries: 0 });
      const streamed = async () => {
        const stream = await client.chat.completions.create({ ...(body as { model: string; messages: { role: 'user'; content: string }[] }), stream: true, stream_options: { include_usage: true } });
        let content = '';
        let usage = null;
        for await (const chunk of stream) {
          content += chunk.choices[0]?.delta.content ?? '';
          if (chunk.usage) usage = chunk.usage;
        }
        return { content, usage };
      };
      const calls = parse.mock.calls.length;
      const streamedFirst = await streamed();
      const streamedAgain = await streamed();
      expect(parse.mock.calls.length).toBe(calls + 1);
      expect(streamedAgain).toEqual(streamedFirst);
      expect(streamedFirst.content).toBe(JSON.parse(first.text).choices[0].message.content);
      expect(streamedFirst.usage).not.toBeNull();

      // Not allowed to read the cache: parsed afresh and sent to the provider.
      const refresh = await send({ 'cache-control': 'no-cache' });
      expect(refresh.cache).toBe('miss');
      expect(parse.mock.calls.length).toBe(calls + 2);
      expect(await upstreamCalls()).toBe(before + 2);

      // Purged: this proxy's copy goes, so the next one is parsed afresh and asked of the provider.
      expect((await cp.api('DELETE', `/v1/projects/${p.id}/cache`, { token: cp.adminToken })).status).toBe(200);
      const afterPurge = await eventually(async () => {
        const r = await send();
        return r.cache === 'miss' ? r : null;
      }, 'a miss after the purge');
      expect(afterPurge.status).toBe(200);
      expect(await upstreamCalls()).toBeGreaterThan(before + 2);

      // Each hit has records of its own, the end user and the model read from the kept parse.
      await proxy.deps.records.flush(5_000);
      const ids = [first.id, again.id, third.id];
      const rows = await eventually(async () => {
        const found = await cp.sql<{ request_id: string; end_user: string | null; model: string; cache_hit: boolean }[]>`
          select request_id, end_user, model, cache_hit from usage_records where request_id = any(${ids})`;
        return found.length === 3 ? found : null;
      }, 'three usage records');
      for (const row of rows) expect(row).toMatchObject({ end_user: 'end-user-14', model: 'gpt-4o-mini', cache_hit: true });
      const audit = await eventually(async () => {
        const found = await cp.sql<{ request_id: string; end_user: string | null; cache: string }[]>`
          select request_id, end_user, cache from audit_events where request_id = any(${ids})`;
        return found.length === 3 ? found : null;
      }, 'three audit events');
      for (const row of audit) expect(row).toMatchObject({ end_user: 'end-user-14', cache: 'hit' });
    } finally {
      parse.mockRestore();
    }
  });
});

describe('Cache-Control', () => {
  it('no-store neither reads nor writes, no-cache writes without reading, max-age bounds the age', async () => {
    const p = await project();
    const before = await upstreamCalls();
    const bypass = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'no-store' });
    expect(bypass.headers.get('x-gateway-cache')).toBe('bypass');
    await bypass.text();
    const miss = await post('/v1/chat/completions', p.key, question(6));
    expect(miss.headers.get('x-gateway-cache')).toBe('miss');
    await miss.text();
    const hit = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'no-store' });
    expect(hit.headers.get('x-gateway-cache')).toBe('bypass');
    await hit.text();
    const refresh = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'no-cache' });
    expect(refresh.headers.get('x-gateway-cache')).toBe('miss');
    await refresh.text();
    // bypass, miss, bypass again (no read), refresh: four calls.
    expect(await upstreamCalls()).toBe(before + 4);
    // Stored by the refresh: a hit now; max-age=3600 accepts it.
    const young = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'max-age=3600' });
    expect(young.headers.get('x-gateway-cache')).toBe('hit');
    await young.text();
    expect(await upstreamCalls()).toBe(before + 4);
    // An entry at least a second old is older than max-age=0 allows.
    await eventually(async () => {
      const r = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'max-age=3600' });
      await r.text();
      return Number(r.headers.get('age')) >= 1;
    }, 'an entry a second old');
    const old = await post('/v1/chat/completions', p.key, question(6), { 'cache-control': 'max-age=0' });
    expect(old.headers.get('x-gateway-cache')).toBe('miss');
    await old.text();
  });
});

describe('what is stored', () => {
  it('never an error, a cut stream, a withheld answer or one over the size bound', async () => {
    const p = await project();
    const cases: [string, Record<string, unknown>][] = [
      ['error', { mock: { status: 400 } }],
      ['cut stream', { stream: true, mock: { error_after_chunks: 2 } }],
      ['content_filter', { mock: { finish_reason: 'content_filter' } }],
      ['content_filter stream', { stream: true, mock: { finish_reason: 'content_filter' } }],
      ['too large', { mock: { content: 'x'.repeat(MAX_ENTRY) } }],
      ['too large stream', { stream: true, mock: { content: 'y'.repeat(MAX_ENTRY) } }],
    ];
    for (const [what, extra] of cases) {
      for (let i = 0; i < 2; i++) {
        const r = await post('/v1/chat/completions', p.key, question(7, extra));
        await r.text();
        expect(r.headers.get('x-gateway-cache'), what).toBe('miss');
      }
    }
    expect(await cp.redis.zcard(keys.cacheIndex(p.id))).toBe(0);
  });

  it('nothing at all for a project with the cache off', async () => {
    const p = await project({});
    const r = await post('/v1/chat/completions', p.key, question(8));
    await r.text();
    expect(r.headers.get('x-gateway-cache')).toBeNull();
    expect(await cp.redis.keys(`${cp.prefix}cache:{${p.id}}*`)).toEqual([]);
  });
});

describe('purge and keys', () => {
  it('a purged project misses; a deleted key is refused 401 where it would have hit', async () => {
    const p = await project();
    for (let i = 0; i < 2; i++) await (await post('/v1/chat/completions', p.key, question(9))).text();
    expect(await cp.redis.zcard(keys.cacheIndex(p.id))).toBe(1);
    const purged = await cp.api('DELETE', `/v1/projects/${p.id}/cache`, { token: cp.adminToken });
    expect(purged.body).toEqual({ purged: 1 });
    const after = await post('/v1/chat/completions', p.key, question(9));
    expect(after.headers.get('x-gateway-cache')).toBe('miss');
    await after.text();

    expect((await cp.api('DELETE', `/v1/projects/${p.id}/keys/${p.keyId}`, { token: cp.adminToken })).status).toBe(204);
    await eventually(async () => (await post('/v1/chat/completions', p.key, question(9))).status === 401, 'the deleted key refused');
  });

  it('a guardrail change purges the answers cached under the old list', async () => {
    const p = await project();
    for (let i = 0; i < 2; i++) await (await post('/v1/chat/completions', p.key, question(10))).text();
    expect(await cp.redis.zcard(keys.cacheIndex(p.id))).toBe(1);
    const put = await cp.api('PUT', `/v1/projects/${p.id}/guardrails`, { token: cp.adminToken, body: [{ id: 'contacts', stage: 'output', type: 'pii', action: 'mask', entities: ['email'] }] });
    expect(put.status).toBe(200);
    expect(await cp.redis.zcard(keys.cacheIndex(p.id))).toBe(0);
    // This proxy's in-memory copy went too: the answer is asked of the provider again, under the new list.
    await eventually(async () => {
      const again = await post('/v1/chat/completions', p.key, question(10));
      await again.text();
      return again.headers.get('x-gateway-cache') === 'miss';
    }, 'a miss after the guardrail change');
  });

  it('a hit counts against the rate limit as a request', async () => {
    const p = await project({ cache: { mode: 'exact', ttl_seconds: 600 }, rate_limits: { key_rpm: 2 } });
    await inOneRateWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post('/v1/chat/completions', p.key, question(10));
      await r.text();
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('records', () => {
  it('a miss and a hit each leave one audit event and one usage record in Postgres; the hit costs nothing and saves what the miss cost', async () => {
    const p = await project();
    const miss = await post('/v1/chat/completions', p.key, question(11, { stream: true, stream_options: { include_usage: true } }));
    await miss.text();
    const hit = await post('/v1/chat/completions', p.key, question(11));
    await hit.text();
    const bypass = await post('/v1/chat/completions', p.key, question(11), { 'cache-control': 'no-store' });
    await bypass.text();
    const ids = [miss, hit, bypass].map((r) => r.headers.get('x-request-id') as string);
    await proxy.deps.records.flush(5_000);
    const usage = await eventually(async () => {
      const rows = await cp.sql<{ request_id: string; cache_hit: boolean; saved_usd: string | null; cost_usd: string | null; input_tokens: number; output_tokens: number; provider: string; stream: boolean }[]>`
        select request_id, cache_hit, saved_usd, cost_usd, input_tokens, output_tokens, provider, stream from usage_records where request_id = any(${ids})`;
      return rows.length === 3 ? rows : null;
    }, 'three usage records');
    const audit = await eventually(async () => {
      const rows = await cp.sql<{ request_id: string; cache: string | null; outcome: string; attempts: number }[]>`
        select request_id, cache, outcome, attempts from audit_events where request_id = any(${ids})`;
      return rows.length === 3 ? rows : null;
    }, 'three audit events');
    const byId = <T extends { request_id: string }>(rows: T[], id: string) => rows.filter((r) => r.request_id === id);
    const [missUsage] = byId(usage, ids[0]!);
    const [hitUsage] = byId(usage, ids[1]!);
    const [bypassUsage] = byId(usage, ids[2]!);
    expect(byId(usage, ids[1]!)).toHaveLength(1);
    expect(missUsage).toMatchObject({ cache_hit: false, saved_usd: null, provider: 'upstream', stream: true });
    expect(missUsage!.input_tokens).toBeGreaterThan(0);
    expect(Number(missUsage!.cost_usd)).toBeGreaterThan(0);
    expect(hitUsage).toMatchObject({ cache_hit: true, input_tokens: 0, output_tokens: 0, provider: 'upstream', stream: false });
    expect(Number(hitUsage!.cost_usd)).toBe(0);
    expect(Number(hitUsage!.saved_usd)).toBe(Number(missUsage!.cost_usd));
    expect(bypassUsage).toMatchObject({ cache_hit: false, saved_usd: null });
    expect(byId(audit, ids[0]!)).toEqual([expect.objectContaining({ cache: 'miss', outcome: 'success', attempts: 1 })]);
    expect(byId(audit, ids[1]!)).toEqual([expect.objectContaining({ cache: 'hit', outcome: 'success', attempts: 0 })]);
    expect(byId(audit, ids[2]!)).toEqual([expect.objectContaining({ cache: 'bypass', outcome: 'success' })]);
    // A hit consumes no quota: the project's used tokens are the miss's and the bypass's only.
    const used = await eventually(async () => {
      const project = await cp.api('GET', `/v1/projects/${p.id}`, { token: cp.adminToken });
      return project.body.used_tokens > 0 ? project.body.used_tokens : null;
    }, 'used tokens counted');
    expect(used).toBe(missUsage!.input_tokens + missUsage!.output_tokens + bypassUsage!.input_tokens + bypassUsage!.output_tokens);

    // The project page's figures: one miss and one hit looked up (the bypass did not), the miss's cost saved.
    const stats = await cp.api('GET', `/v1/projects/${p.id}/cache`, { token: cp.adminToken });
    expect(stats.body).toEqual({ cache: { mode: 'exact', ttl_seconds: 600 }, window_days: 30, lookups: 2, hits: 1, hit_rate: 0.5, saved_usd: Number(missUsage!.cost_usd) });

    // The proxy's Prometheus counters for the project say the same.
    const metrics = await (await fetch(`http://127.0.0.1:${proxy.metricsPort}/metrics`)).text();
    const series = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
    for (const result of ['miss', 'hit', 'bypass']) expect(series('gateway_cache_lookups_total', `project="${p.id}",result="${result}"`)).toBe(1);
    expect(series('gateway_cache_stores_total', `project="${p.id}",result="stored"`)).toBe(1);
    expect(series('gateway_cache_stored_bytes_total', `project="${p.id}"`)).toBeGreaterThan(0);
    expect(series('gateway_cache_saved_usd_total', `project="${p.id}"`)).toBeCloseTo(Number(missUsage!.cost_usd), 12);
  });

  it('a project with the cache off records no cache field', async () => {
    const p = await project({});
    const r = await post('/v1/chat/completions', p.key, question(12));
    await r.text();
    const id = r.headers.get('x-request-id') as string;
    await proxy.deps.records.flush(5_000);
    const rows = await eventually(async () => {
      const found = await cp.sql<{ cache: string | null }[]>`select cache from audit_events where request_id = ${id}`;
      return found.length === 1 ? found : null;
    }, 'the audit event');
    expect(rows[0]!.cache).toBeNull();
  });
});

describe('several proxies', () => {
  it('an answer stored by one proxy is a hit on another, which reads it from Redis; a purge reaches both', async () => {
    const other = await startProxy({
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: cp.prefix,
      PROXY_PORT: '0',
      METRICS_PORT: '0',
      PROXY_HOST: '127.0.0.1',
      GATEWAY_CONFIG: providersFile,
      LOG_LEVEL: 'silent',
      // No copy in memory: every lookup of this one is a Redis read.
      CACHE_LOCAL_BYTES: '0',
    });
    try {
      const p = await project();
      const before = await upstreamCalls();
      const ask = async (base: string) => {
        const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${p.key}` }, body: JSON.stringify(question(13)) });
        await r.text();
        return r.headers.get('x-gateway-cache');
      };
      const otherUrl = `http://127.0.0.1:${other.port}`;
      expect(await ask(url)).toBe('miss');
      // Stored after the answer was sent: the other proxy finds it once the MULTI landed.
      await eventually(async () => (await cp.redis.zcard(keys.cacheIndex(p.id))) === 1, 'the entry stored');
      expect(await ask(otherUrl)).toBe('hit');
      expect(await ask(url)).toBe('hit');
      expect(await upstreamCalls()).toBe(before + 1);
      expect((await cp.api('DELETE', `/v1/projects/${p.id}/cache`, { token: cp.adminToken })).body).toEqual({ purged: 1 });
      // The first proxy held a copy in memory: the purge's project.updated message drops it.
      await eventually(async () => (await ask(url)) === 'miss', 'the first proxy misses after the purge');
    } finally {
      await other.drain();
    }
  });
});
