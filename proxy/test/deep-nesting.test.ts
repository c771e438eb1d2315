import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * JSON nested thousands of levels deep parses, then overflows the stack of whatever walks it next
 * (the token estimate, a translation): a client error (400), never a 500, and the proxy serves on.
 */
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  h = await startHarness('deep', 'providers:\n  - name: builtin\n    type: mock\n    models: [mock-1]\n');
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
});

const post = (path: string, body: string) =>
  fetch(`${h.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body });

describe('deeply nested bodies', () => {
  it('answers 400 for tool parameters nested 20,000 levels deep, on every inference endpoint', async () => {
    let schema = '{}';
    for (let i = 0; i < 20_000; i++) schema = `{"type":"object","properties":{"x":${schema}}}`;
    const chat = `{"model":"mock-1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"deep","parameters":${schema}}}]}`;
    const res = await post('/v1/chat/completions', chat);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    const responses = `{"model":"mock-1","input":"hi","tools":[{"type":"function","name":"deep","parameters":${schema}}]}`;
    expect((await post('/v1/responses', responses)).status).toBe(400);
    const messages = `{"model":"mock-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"deep","input_schema":${schema}}]}`;
    expect((await post('/v1/messages', messages)).status).toBe(400);
    const ok = await post('/v1/chat/completions', '{"model":"mock-1","messages":[{"role":"user","content":"hi"}]}');
    expect(ok.status).toBe(200);
    const { audit } = await h.records();
    expect(audit.filter((a) => a.status === 400 && a.error_code === 'INVALID_REQUEST').length).toBeGreaterThanOrEqual(3);
    expect(audit.some((a) => a.status === 500)).toBe(false);
  });
});
