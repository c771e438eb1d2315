import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, type AuditEvent } from '@gateway/shared';
import { deleteTestKey, projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Unauthenticated traffic is cheap to refuse: a missing or wrong key is answered 401 before the
 * body is read (the client is still sending when the answer comes), and an address that keeps
 * failing is throttled (429) with one `gateway.throttled` audit event per second carrying how many
 * requests it stands for, so every request is accounted for without a row per request.
 */
const providers = `providers:\n  - name: builtin\n    type: mock\n    models: [mock-1]\n`;
const LIMIT = 5;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  // Trusting the loopback peer: each test speaks for its own client address via X-Forwarded-For.
  h = await startHarness('unauthenticated', providers, { AUTH_FAILURE_LIMIT: String(LIMIT), TRUST_PROXY: '127.0.0.1, ::1' });
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => h?.stop());

const FOUR_MIB = 4 * 1024 * 1024;

/**
 * Declares a 4 MiB body, sends its first 64 KiB, and waits for an answer without sending more.
 * Resolves with the status line and headers, and how many body bytes had been sent by then.
 */
function answerWhileSending(path: string, headers: Record<string, string>): Promise<{ head: string; sent: number; closed: boolean }> {
  const url = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    let sent = 0;
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      const end = received.indexOf('\r\n\r\n');
      if (end === -1 && !closed) return;
      settled = true;
      clearTimeout(timer);
      resolve({ head: end === -1 ? received : received.slice(0, end), sent, closed });
      socket.destroy();
    };
    // Not a speed assertion: a proxy that waits for the body never answers, and the test fails here.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer while the body was unsent (${sent} of ${FOUR_MIB} bytes sent)`));
    }, 10_000);
    socket.on('error', () => finish(true));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      const lines = [`POST ${path} HTTP/1.1`, `host: ${url.host}`, 'content-type: application/json', `content-length: ${FOUR_MIB}`];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      const part = Buffer.alloc(64 * 1024, 0x20);
      socket.write(part);
      sent = part.length;
    });
  });
}

function status(head: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
}

async function chat(headers: Record<string, string>): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

async function auditOf(address: string): Promise<AuditEvent[]> {
  const { audit } = await h.records();
  return audit.filter((a) => a.client_ip === address);
}

describe('a request without a valid key', () => {
  it('is answered 401 before its body is read: no key', async () => {
    const { head, sent } = await answerWhileSending('/v1/chat/completions', { 'x-forwarded-for': '203.0.113.1' });
    expect(status(head)).toBe(401);
    expect(sent).toBeLessThan(FOUR_MIB);
  });

  it('is answered 401 before its body is read: a well-formed key Redis does not know', async () => {
    const { head } = await answerWhileSending('/v1/messages', { 'x-api-key': generateApiKey().key, 'x-forwarded-for': '203.0.113.2' });
    expect(status(head)).toBe(401);
  });

  it('is answered 401 before its body is read: a deleted key, still named in the audit event', async () => {
    const doomed = await projectTestKey(h.redis, h.keys);
    expect((await chat({ 'x-api-key': doomed.key, 'x-forwarded-for': '203.0.113.3' })).status).toBe(200);
    await deleteTestKey(h.redis, h.keys, doomed);
    let head = '';
    for (let i = 0; i < 50 && status(head) !== 401; i++) ({ head } = await answerWhileSending('/v1/embeddings', { authorization: `Bearer ${doomed.key}`, 'x-forwarded-for': '203.0.113.3' }));
    expect(status(head)).toBe(401);
    const events = await auditOf('203.0.113.3');
    expect(events.some((e) => e.outcome === 'auth_failed' && e.key_id === doomed.id)).toBe(true);
  });

  it('with a valid key, a body held back while the key is looked up still arrives whole', async () => {
    const fresh = await projectTestKey(h.redis, h.keys);
    const content = 'x'.repeat(512 * 1024);
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': fresh.key },
      body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
  });
});

describe('failed authentications from one address', () => {
  it('are throttled past the limit, audited as gateway.throttled events with a count, and a valid key still passes', async () => {
    const address = '198.51.100.20';
    // The proxy holds this key once it has served it (from anywhere).
    expect((await chat({ 'x-api-key': key.key, 'x-forwarded-for': '198.51.100.99' })).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await chat({ 'x-api-key': 'gw_wrong', 'x-forwarded-for': address })).status).toBe(401);
    const THROTTLED = 40;
    for (let i = 0; i < THROTTLED; i++) {
      const res = await chat({ 'x-forwarded-for': address });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await res.json()) as unknown).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    }
    // A large body from a throttled address is refused without being read either.
    const { head } = await answerWhileSending('/v1/chat/completions', { 'x-forwarded-for': address });
    expect(status(head)).toBe(429);
    // Another address is not affected, and a key the proxy holds is served from the throttled one.
    expect((await chat({ 'x-forwarded-for': '198.51.100.21' })).status).toBe(401);
    expect((await chat({ 'x-api-key': key.key, 'x-forwarded-for': address })).status).toBe(200);

    h.proxy.deps.authThrottle?.flush();
    const events = await auditOf(address);
    const failed = events.filter((e) => e.type === 'gateway.request' && e.outcome === 'auth_failed');
    const throttled = events.filter((e) => e.type === 'gateway.throttled');
    expect(failed).toHaveLength(LIMIT);
    // Every refused request is accounted for, in far fewer events than requests.
    expect(throttled.reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(THROTTLED + 1);
    expect(throttled.length).toBeLessThan(THROTTLED / 4);
    for (const e of throttled) expect(e).toMatchObject({ outcome: 'auth_failed', status: 429, error_code: 'RATE_LIMITED', project_id: null, key_id: null });
  });
});

describe('the MCP gateway', () => {
  const mcp = (headers: Record<string, string>) =>
    fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('answers a missing or wrong key 401 before the body is read', async () => {
    const { head, sent } = await answerWhileSending('/mcp', { 'x-forwarded-for': '203.0.113.40' });
    expect(status(head)).toBe(401);
    expect(sent).toBeLessThan(FOUR_MIB);
    expect(status((await answerWhileSending('/mcp/any', { 'x-api-key': generateApiKey().key, 'x-forwarded-for': '203.0.113.41' })).head)).toBe(401);
  });

  it('shares the failed-authentication throttle with the model endpoints', async () => {
    const address = '198.51.100.40';
    for (let i = 0; i < LIMIT; i++) expect((await mcp({ 'x-api-key': 'gw_wrong', 'x-forwarded-for': address })).status).toBe(401);
    // Past the limit, on MCP and on the model endpoints alike.
    const refused = await mcp({ 'x-forwarded-for': address });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error?: { message?: string } }).error?.message).toContain('RATE_LIMITED');
    expect((await chat({ 'x-forwarded-for': address })).status).toBe(429);
    // And the other way round: failures on a model endpoint throttle MCP.
    const other = '198.51.100.41';
    for (let i = 0; i < LIMIT; i++) expect((await chat({ 'x-api-key': 'gw_wrong', 'x-forwarded-for': other })).status).toBe(401);
    expect((await mcp({ 'x-forwarded-for': other })).status).toBe(429);
  });
});
