import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, spawnMockUpstream, type MockUpstreamProcess } from '../../test-support/processes.js';
import { deleteTestKey, projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/** Every error row of DESIGN §3 the proxy owns, and the ways a request can end badly. */
let upstream: MockUpstreamProcess;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  upstream = await spawnMockUpstream();
  h = await startHarness(
    'errors',
    `providers:
  - name: upstream
    type: openai
    base_url: ${upstream.baseUrl}
    api_key: sk-upstream-provider-secret
    models: [gpt-4o-mini]
    timeout_ms: 400
    idle_timeout_ms: 400
  - name: narrow
    type: openai
    base_url: ${upstream.baseUrl}
    models: [narrow-model]
    max_connections: 1
    max_queued: 1
  - name: nowhere
    type: openai
    base_url: http://127.0.0.1:1/v1
    models: [dead-model]
  - name: builtin
    type: mock
    models: [mock-1]
`,
    { MAX_BODY_BYTES: '4096' },
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await upstream?.stop();
});

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key, ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, code: string, param?: string): Promise<{ message: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.type).toBe('string');
  if (param !== undefined) expect(body.error.param).toBe(param);
  return body.error;
}

const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

describe('authentication', () => {
  it('accepts x-api-key and Authorization: Bearer', async () => {
    expect((await post(hello)).status).toBe(200);
    expect((await post(hello, { 'x-api-key': '', authorization: `Bearer ${key.key}` })).status).toBe(200);
  });

  it('refuses no key, an unknown key, garbage and an expired key with 401 UNAUTHORIZED', async () => {
    await expectError(await post(hello, { 'x-api-key': '' }), 401, 'UNAUTHORIZED');
    await expectError(await post(hello, { 'x-api-key': 'gw_thisKeyDoesNotExistAnywhere0000000000000' }), 401, 'UNAUTHORIZED');
    await expectError(await post(hello, { 'x-api-key': 'not-a-key' }), 401, 'UNAUTHORIZED');
    const expired = await projectTestKey(h.redis, h.keys, { expiresAt: Date.now() - 1 });
    await expectError(await post(hello, { 'x-api-key': expired.key }), 401, 'UNAUTHORIZED');
  });

  it('serves a key created after it was first refused', async () => {
    const later = await projectTestKey(h.redis, h.keys);
    await eventually(async () => (await post(hello, { 'x-api-key': later.key })).status === 200, 'new key accepted');
  });
});

describe('request validation', () => {
  const cases: [string, unknown, string][] = [
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ['no messages', { model: 'gpt-4o-mini' }, 'messages'],
    ['empty messages', { model: 'gpt-4o-mini', messages: [] }, 'messages'],
    ['a message without role', { model: 'gpt-4o-mini', messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['an unknown role', { model: 'gpt-4o-mini', messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
    ['content of the wrong type', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    ['temperature above 2', { ...hello, temperature: 2.5 }, 'temperature'],
    ['temperature below 0', { ...hello, temperature: -0.1 }, 'temperature'],
    ['top_p above 1', { ...hello, top_p: 1.5 }, 'top_p'],
    ['max_tokens zero', { ...hello, max_tokens: 0 }, 'max_tokens'],
    ['max_tokens fractional', { ...hello, max_tokens: 1.5 }, 'max_tokens'],
    ['stop a number', { ...hello, stop: 5 }, 'stop'],
    ['tools not an array', { ...hello, tools: 'all' }, 'tools'],
    ['stream not boolean', { ...hello, stream: 'yes' }, 'stream'],
    ['a JSON array body', [1, 2], 'body'],
  ];
  for (const [what, body, param] of cases) {
    it(`answers 400 INVALID_REQUEST for ${what}`, async () => {
      await expectError(await post(body), 400, 'INVALID_REQUEST', param);
    });
  }

  it('accepts an assistant message with tool_calls and null content', async () => {
    const res = await post({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(res.status).toBe(200);
  });

  it('answers 400 for malformed JSON and for invalid UTF-8', async () => {
    await expectError(await post('{"model": "gpt-4o-mini", "messages": ['), 400, 'INVALID_REQUEST');
    const bad = Buffer.concat([Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
    const err = await expectError(await post(bad), 400, 'INVALID_REQUEST');
    expect(err.message).toMatch(/UTF-8/);
  });

  it('passes unknown fields through to the provider', async () => {
    expect((await post({ ...hello, seed: 42, user: 'u-1', logit_bias: { '50256': -100 } })).status).toBe(200);
    const seen = await upstream.stats();
    expect(seen.lastBody).toMatchObject({ seed: 42, user: 'u-1', logit_bias: { '50256': -100 } });
  });

  it('answers 413 for a body over the limit, declared or streamed', async () => {
    const big = { ...hello, messages: [{ role: 'user', content: 'x'.repeat(10_000) }] };
    await expectError(await post(big), 413, 'PAYLOAD_TOO_LARGE');
    // Chunked, with no content-length: the limit is enforced while reading.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-api-key': key.key, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"');
      for (let i = 0; i < 10; i++) req.write('y'.repeat(1000));
      req.end('"}]}');
    });
    expect(status).toBe(413);
  });
});

describe('routing and providers', () => {
  it('answers 404 MODEL_NOT_FOUND for a model no provider serves', async () => {
    await expectError(await post({ ...hello, model: 'gpt-9' }), 404, 'MODEL_NOT_FOUND', 'model');
  });

  it('maps a provider error to 502 UPSTREAM_ERROR, keeping its message but no credential', async () => {
    const err = await expectError(
      await post({ ...hello, mock: { status: 500, error_message: 'overloaded, try again (key sk-live-abcdefghijklmnop)' } }),
      502,
      'UPSTREAM_ERROR',
    );
    expect(err.message).toContain('overloaded, try again');
    expect(err.message).not.toContain('sk-live-abcdefghijklmnop');
  });

  it("passes a provider's 400 through as 400 INVALID_REQUEST with its message and param, scrubbed", async () => {
    const err = await expectError(
      await post({ ...hello, mock: { status: 400, error_param: 'messages', error_message: "This model's maximum context length is 8192 tokens (key sk-live-abcdefghijklmnop)" } }),
      400,
      'INVALID_REQUEST',
      'messages',
    );
    expect(err.message).toContain('maximum context length');
    expect(err.message).not.toContain('sk-live-abcdefghijklmnop');
  });

  it("passes a provider's 429 through as 429 RATE_LIMITED with its Retry-After", async () => {
    const res = await post({ ...hello, mock: { status: 429, retry_after: '7', error_message: 'Rate limit reached' } });
    expect(res.headers.get('retry-after')).toBe('7');
    const err = await expectError(res, 429, 'RATE_LIMITED');
    expect(err.message).toContain('Rate limit reached');
  });

  it("maps a provider's 5xx to 502 UPSTREAM_ERROR and its 504 to 504 UPSTREAM_TIMEOUT", async () => {
    await expectError(await post({ ...hello, mock: { status: 503 } }), 502, 'UPSTREAM_ERROR');
    await expectError(await post({ ...hello, mock: { status: 504 } }), 504, 'UPSTREAM_TIMEOUT');
  });

  it('ends a stream whose provider sends an error event as an error, billed for what streamed', async () => {
    const res = await post({ ...hello, stream: true, mock: { chunks: 6, error_after_chunks: 3, error_message: 'boom (sk-live-abcdefghijklmnop)' } });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id') as string;
    const text = await res.text();
    expect(text).toContain('"code":"UPSTREAM_ERROR"');
    expect(text).toContain('boom');
    expect(text).not.toContain('sk-live-abcdefghijklmnop');
    expect(text).not.toContain('[DONE]');
    const { usage, audit } = await h.records();
    const event = audit.find((a) => a.request_id === requestId);
    expect(event).toMatchObject({ outcome: 'error', error_code: 'UPSTREAM_ERROR' });
    const record = usage.find((u) => u.request_id === requestId);
    expect(record?.finish_reason).toBe('error');
    expect(record?.tokens.output).toBeGreaterThan(0);
  });

  it('answers 503 at once past a provider\'s max_queued, and reports the queue depth', async () => {
    const slow = { ...hello, model: 'narrow-model', mock: { delay_ms: 600 } };
    const running = post(slow);
    await eventually(async () => (await upstream.stats()).lastBody !== null && JSON.stringify((await upstream.stats()).lastBody).includes('narrow-model'), 'first request at the provider');
    const queued = post(slow);
    const ops = `http://127.0.0.1:${h.proxy.metricsPort}/metrics`;
    await eventually(async () => /gateway_upstream_queued\{provider="narrow"\} 1/.test(await (await fetch(ops)).text()), 'second request queued');
    const refused = await post(slow);
    expect(refused.headers.get('retry-after')).toBe('1');
    const err = await expectError(refused, 503, 'UNAVAILABLE');
    expect(err.message).toContain('narrow');
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
  });

  it('maps an unreachable provider to 502 UPSTREAM_ERROR', async () => {
    await expectError(await post({ ...hello, model: 'dead-model' }), 502, 'UPSTREAM_ERROR');
  });

  it('maps a provider that does not answer in time to 504 UPSTREAM_TIMEOUT', async () => {
    await expectError(await post({ ...hello, mock: { delay_ms: 3_000 } }), 504, 'UPSTREAM_TIMEOUT');
  });

  it('ends a stream whose provider falls silent with one SSE error event and no [DONE]', async () => {
    const res = await post({ ...hello, stream: true, mock: { hang_after_chunks: 2 } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"code":"UPSTREAM_TIMEOUT"');
    expect(text).not.toContain('[DONE]');
  });

  it('serves the built-in offline mock provider', async () => {
    const res = await post({ ...hello, model: 'mock-1' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toContain('mock provider');
  });
});

describe('client disconnects and deleted keys', () => {
  it('aborts the upstream request when the client leaves mid-stream', async () => {
    const before = (await upstream.stats()).aborted;
    const controller = new AbortController();
    const res = await post({ ...hello, stream: true, mock: { chunks: 50, gap_ms: 50 } }, {});
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    controller.abort();
    await eventually(async () => (await upstream.stats()).aborted > before, 'upstream connection aborted');
  });

  it('cuts a stream in flight when its key is deleted, and refuses the key afterwards', async () => {
    const doomed = await projectTestKey(h.redis, h.keys);
    const before = (await upstream.stats()).aborted;
    const res = await post({ ...hello, stream: true, mock: { chunks: 100, gap_ms: 30 } }, { 'x-api-key': doomed.key });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await deleteTestKey(h.redis, h.keys, doomed);
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toContain('"code":"UNAUTHORIZED"');
    expect(text).not.toContain('[DONE]');
    await eventually(async () => (await upstream.stats()).aborted > before, 'upstream aborted after revocation');
    await expectError(await post(hello, { 'x-api-key': doomed.key }), 401, 'UNAUTHORIZED');
  });

  it('cuts a stream in flight at the moment its key expires, with no message needed', async () => {
    const expiring = await projectTestKey(h.redis, h.keys, { expiresAt: Date.now() + 400 });
    const res = await post({ ...hello, stream: true, mock: { chunks: 200, gap_ms: 20 } }, { 'x-api-key': expiring.key });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"code":"UNAUTHORIZED"');
    expect(text).toContain('expired');
    expect(text).not.toContain('[DONE]');
    await expectError(await post(hello, { 'x-api-key': expiring.key }), 401, 'UNAUTHORIZED');
  });

  it('serves keys that expire in 30 and 365 days, slow and streamed requests included', async () => {
    // Regression: a timer of more than 2^31-1 ms fires after 1 ms, which cut every request on such a key.
    for (const days of [30, 365]) {
      const longLived = await projectTestKey(h.redis, h.keys, { expiresAt: Date.now() + days * 86_400_000 });
      expect((await post({ ...hello, mock: { delay_ms: 300 } }, { 'x-api-key': longLived.key })).status).toBe(200);
      const res = await post({ ...hello, stream: true, mock: { chunks: 5, gap_ms: 60 } }, { 'x-api-key': longLived.key });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('[DONE]');
      expect(text).not.toContain('"error"');
    }
    // Each key's empty list keeps its expiry watch until idle lists are dropped together (in-flight.ts).
    expect(h.proxy.deps.inFlight.size).toBe(0);
    expect(h.proxy.deps.inFlight.watchedExpiries).toBeLessThanOrEqual(2);
  });

  it('answers 401 to a non-streaming request in flight when its key is deleted', async () => {
    const doomed = await projectTestKey(h.redis, h.keys);
    expect((await post(hello, { 'x-api-key': doomed.key })).status).toBe(200);
    const pending = post({ ...hello, mock: { delay_ms: 300 } }, { 'x-api-key': doomed.key });
    await eventually(() => h.proxy.deps.inFlight.size > 0, 'request in flight');
    await deleteTestKey(h.redis, h.keys, doomed);
    await expectError(await pending, 401, 'UNAUTHORIZED');
  });
});

describe('operations endpoints and headers', () => {
  it("echoes a sane x-request-id and replaces an unsafe one", async () => {
    expect((await post(hello, { 'x-request-id': 'trace-123' })).headers.get('x-request-id')).toBe('trace-123');
    const replaced = (await post(hello, { 'x-request-id': 'bad id with spaces' })).headers.get('x-request-id');
    expect(replaced).toBeTruthy();
    expect(replaced).not.toContain(' ');
  });

  it('lists the models, for a valid key only', async () => {
    const res = await fetch(`${h.url}/v1/models`, { headers: { 'x-api-key': key.key } });
    const body = (await res.json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id).sort()).toEqual(['dead-model', 'gpt-4o-mini', 'mock-1', 'narrow-model']);
    expect((await fetch(`${h.url}/v1/models`)).status).toBe(401);
  });

  it('answers HEAD without a body, so the client reads the next answer whole', async () => {
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const one = (method: string, path: string) =>
      new Promise<{ status: number; body: string; length: string | undefined }>((resolve, reject) => {
        const req = httpRequest(`${h.url}${path}`, { method, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, length: res.headers['content-length'] }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const head = await one('HEAD', '/');
      expect(head.status).toBe(404);
      expect(head.body).toBe('');
      expect(Number(head.length)).toBeGreaterThan(0);
      // The same agent: a body after the HEAD answer would be read as this one's start.
      const get = await one('GET', '/healthz');
      expect(get).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    } finally {
      agent.destroy();
    }
  });

  it('answers health and readiness, and Prometheus metrics on METRICS_PORT only', async () => {
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
    // The data plane's public port does not expose the metrics (they name models and providers).
    await expectError(await fetch(`${h.url}/metrics`), 404, 'NOT_FOUND');
    const ops = `http://127.0.0.1:${h.proxy.metricsPort}`;
    expect(h.proxy.metricsPort).not.toBe(h.proxy.port);
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(/gateway_requests_total\{status="200",model="gpt-4o-mini",provider="upstream",endpoint="chat.completions"\} \d+/);
    expect(metrics).toContain('gateway_request_duration_seconds_bucket');
    expect(metrics).toContain('gateway_requests_in_flight');
    expect(metrics).toMatch(/gateway_upstream_errors_total\{provider="upstream",code="UPSTREAM_ERROR"\} \d+/);
  });

  it('refuses a form-encoded or text body with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    await expectError(await post('model=gpt-4o-mini', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectError(await post(JSON.stringify(hello), { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await post(JSON.stringify(hello), { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    await expectError(await fetch(`${h.url}/v1/audio/speech`, { method: 'POST' }), 404, 'NOT_FOUND');
    await expectError(await fetch(`${h.url}/v1/chat/completions`), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('records', () => {
  it('audits every request once, including refusals, and never records a secret', async () => {
    const { usage, audit, raw } = await h.records();
    const ids = new Set(audit.map((a) => a.id));
    expect(ids.size).toBe(audit.length);
    const outcomes = new Set(audit.map((a) => a.outcome));
    for (const o of ['success', 'auth_failed', 'error', 'cancelled']) expect(outcomes).toContain(o);
    const refused = audit.filter((a) => a.outcome === 'auth_failed' && a.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    expect(audit.some((a) => a.error_code === 'INVALID_REQUEST' && a.status === 400)).toBe(true);
    expect(audit.some((a) => a.error_code === 'PAYLOAD_TOO_LARGE' && a.status === 413)).toBe(true);
    // Usage exists exactly for requests that were sent to a provider, with the same id as their audit event.
    for (const u of usage) expect(ids).toContain(u.id);
    expect(usage.some((u) => u.finish_reason === 'error')).toBe(true);
    expect(usage.some((u) => u.finish_reason === 'cancelled')).toBe(true);
    const all = raw.join('\n');
    expect(all).not.toContain(key.key);
    expect(all).not.toContain('sk-upstream-provider-secret');
  });
});
