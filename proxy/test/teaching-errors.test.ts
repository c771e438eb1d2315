import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Errors that teach: a refusal says what was wrong with what the client sent — where the key was
 * and what it looked like (never the key itself), the nearest model the gateway serves, where the
 * JSON broke — so the first hour with the gateway is not spent guessing.
 */
const providers = `providers:
  - name: builtin
    type: mock
    models: [mock-1, mock-1-mini, gpt-4o-mini]
`;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  h = await startHarness('teaching-errors', providers);
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => h?.stop());

async function post(path: string, headers: Record<string, string>, body: string | object): Promise<{ status: number; message: string; code: string }> {
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as { error: { message: string; code?: string; type: string } };
  return { status: res.status, message: json.error.message, code: json.error.code ?? json.error.type };
}

const hello = { model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] };

describe('a key in the wrong place', () => {
  it('Authorization without Bearer says so, without echoing the key', async () => {
    const res = await post('/v1/chat/completions', { authorization: key.key }, hello);
    expect(res.status).toBe(401);
    expect(res.message).toMatch(/without "Bearer "/);
    expect(res.message).toMatch(/gateway key/);
    expect(res.message).not.toContain(key.key.slice(3, 12));
  });

  it('an api-key header (Azure style) says it is not read, and what it holds', async () => {
    const res = await post('/v1/chat/completions', { 'api-key': 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' }, hello);
    expect(res.status).toBe(401);
    expect(res.message).toMatch(/api-key header/);
    expect(res.message).toMatch(/looks like an OpenAI key/);
    expect(res.message).not.toContain('abcdefghij');
  });

  it('another scheme, an empty Bearer and a provider key are each named', async () => {
    expect((await post('/v1/chat/completions', { authorization: 'Basic dXNlcjpwYXNz' }, hello)).message).toMatch(/"Basic" scheme/);
    expect((await post('/v1/chat/completions', { authorization: 'Bearer' }, hello)).message).toMatch(/holds no key/);
    const anthropic = await post('/v1/messages', { 'x-api-key': 'sk-ant-api03-secretsecretsecret' }, { model: 'mock-1', max_tokens: 10, messages: [] });
    expect(anthropic.status).toBe(401);
    expect(anthropic.message).toMatch(/looks like an Anthropic key/);
    expect(anthropic.message).not.toContain('secret');
  });
});

describe('an unknown model', () => {
  it('suggests the nearest served id', async () => {
    const res = await post('/v1/chat/completions', { 'x-api-key': key.key }, { ...hello, model: 'gpt-4o-mnii' });
    expect(res.status).toBe(404);
    expect(res.message).toContain('Did you mean `gpt-4o-mini`?');
    expect((await post('/v1/chat/completions', { 'x-api-key': key.key }, { ...hello, model: 'MOCK-1' })).message).toContain('`mock-1`');
  });

  it('lists served ids when none is close', async () => {
    const res = await post('/v1/chat/completions', { 'x-api-key': key.key }, { ...hello, model: 'claude-opus-4-1' });
    expect(res.status).toBe(404);
    expect(res.message).toMatch(/It serves `mock-1`, `mock-1-mini`, `gpt-4o-mini`/);
  });
});

describe('a JSON syntax error', () => {
  it('gives its line and column', async () => {
    const res = await post('/v1/chat/completions', { 'x-api-key': key.key }, '{\n  "model": "mock-1",\n  "messages": [],\n}');
    expect(res.status).toBe(400);
    expect(res.message).toMatch(/not valid JSON: .* at line 4, column 1/);
    const stray = await post('/v1/messages', { 'x-api-key': key.key }, '{"model": "mock-1", "max_tokens": tru}');
    expect(stray.message).toMatch(/at line 1, column 38/);
    expect((await post('/v1/chat/completions', { 'x-api-key': key.key }, '{"model": "mock-1", "messages": [')).message).toMatch(/ends .* before the JSON is complete/);
  });
});
