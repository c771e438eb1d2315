import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProjectPolicy, NO_RATE_LIMITS, type ProjectPolicy } from '@gateway/shared';
import { eventually } from '../../test-support/processes.js';
import { inOneRateWindow } from '../../test-support/rate-window.js';
import { deleteTestKey, projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * POST /v1/messages and /v1/messages/count_tokens with raw HTTP: every refusal and failure in
 * Anthropic's error shape with the gateway's status, streams cut by a deleted key or a failing
 * provider, hostile bodies, and the records each request leaves.
 */
let wire: RunningWireMock;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  wire = await startOpenAiWireMock();
  h = await startHarness(
    'messages',
    `providers:
  - name: builtin
    type: mock
    models: [claude-mock]
  - name: slow
    type: mock
    models: [claude-slow]
    options: { chunks: 200, gap_ms: 20 }
  - name: wire
    type: openai
    base_url: ${wire.baseUrl}/v1
    models: [{ id: wire-500, upstream: conf-500 }, { id: wire-429, upstream: conf-429 }, { id: wire-stream-error, upstream: conf-stream-error }]
`,
    { MAX_BODY_BYTES: '65536' },
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await wire?.close();
});

const hello = { model: 'claude-mock', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }] };

function post(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages'): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': key.key, ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

interface AnthropicError {
  type: string;
  error: { type: string; message: string };
}

async function expectError(res: Response, status: number, type: string): Promise<AnthropicError['error']> {
  expect(res.status).toBe(status);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const body = (await res.json()) as AnthropicError;
  expect(Object.keys(body).sort()).toEqual(['error', 'type']);
  expect(body.type).toBe('error');
  expect(Object.keys(body.error).sort()).toEqual(['message', 'type']);
  expect(body.error.type).toBe(type);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

/** A key whose project has this policy (written before the project's first request, as the control plane does). */
async function keyWithPolicy(policy: Partial<ProjectPolicy>): Promise<TestKey> {
  const projectId = randomUUID();
  const full = { id: projectId, quota_tokens: null, quota_period: 'total' as const, rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null, ...policy };
  await h.redis.set(h.keys.projectPolicy(projectId), encodeProjectPolicy(full));
  return projectTestKey(h.redis, h.keys, { projectId });
}

async function recordsOf(requestId: string) {
  const { audit, usage } = await h.records();
  return { audit: audit.filter((a) => a.request_id === requestId), usage: usage.filter((u) => u.request_id === requestId) };
}

async function readAll(res: Response): Promise<string> {
  return await res.text();
}

/** The SSE text as event names in order. */
function eventNames(text: string): string[] {
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

describe('errors in Anthropic\'s shape, status kept', () => {
  it('401 authentication_error for no key, an unknown key and garbage, audited as auth_failed', async () => {
    await expectError(await post(hello, { 'x-api-key': '' }), 401, 'authentication_error');
    await expectError(await post(hello, { 'x-api-key': 'gw_thisKeyDoesNotExistAnywhere0000000000000' }), 401, 'authentication_error');
    const res = await post(hello, { 'x-api-key': 'not-a-key' });
    const requestId = res.headers.get('x-request-id')!;
    await expectError(res, 401, 'authentication_error');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'auth_failed', status: 401, error_code: 'UNAUTHORIZED' })]);
    expect(usage).toEqual([]);
  });

  it('accepts any anthropic-version, and none', async () => {
    expect((await post(hello, { 'anthropic-version': '2099-01-01' })).status).toBe(200);
    const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` }, body: JSON.stringify(hello) });
    expect(res.status).toBe(200);
  });

  it('400 invalid_request_error naming the field, audited as an error', async () => {
    const { max_tokens: _, ...noMax } = hello;
    const res = await post(noMax);
    const requestId = res.headers.get('x-request-id')!;
    const err = await expectError(res, 400, 'invalid_request_error');
    expect(err.message).toBe('max_tokens: Field required');
    expect((await expectError(await post({ ...hello, temperature: 1.5 }), 400, 'invalid_request_error')).message).toMatch(/^temperature: /);
    expect((await expectError(await post({ ...hello, container: 'container_01' }), 400, 'invalid_request_error')).message).toMatch(/^container: not supported/);
    expect((await expectError(await post('{"model":'), 400, 'invalid_request_error')).message).toMatch(/not valid JSON/);
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'error', status: 400, error_code: 'INVALID_REQUEST', model: 'claude-mock' })]);
    expect(usage).toEqual([]);
  });

  it('answers a field that only tunes the answer, naming it as dropped', async () => {
    const res = await post({ ...hello, top_k: 10 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-dropped-params')).toBe('top_k');
    expect(((await res.json()) as { type: string }).type).toBe('message');
  });

  it('404 not_found_error for a model no provider serves', async () => {
    const err = await expectError(await post({ ...hello, model: 'claude-nowhere' }), 404, 'not_found_error');
    expect(err.message).toContain('claude-nowhere');
  });

  it('403 permission_error for a model the project may not use', async () => {
    const narrow = await keyWithPolicy({ allowed_models: ['claude-slow'] });
    await expectError(await post(hello, { 'x-api-key': narrow.key }), 403, 'permission_error');
  });

  it('400 for max_tokens above the project cap', async () => {
    const capped = await keyWithPolicy({ max_tokens_cap: 50 });
    const err = await expectError(await post(hello, { 'x-api-key': capped.key }), 400, 'invalid_request_error');
    expect(err.message).toContain('max_tokens');
  });

  it('429 rate_limit_error when the project quota is spent, audited as policy_blocked', async () => {
    const spent = await keyWithPolicy({ quota_tokens: 0 });
    const res = await post(hello, { 'x-api-key': spent.key });
    const requestId = res.headers.get('x-request-id')!;
    const err = await expectError(res, 429, 'rate_limit_error');
    expect(err.message).toContain('quota');
    const { audit } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'policy_blocked', status: 429, error_code: 'QUOTA_EXCEEDED' })]);
  });

  it('429 rate_limit_error with Retry-After past a rate limit', async () => {
    const limited = await keyWithPolicy({ rate_limits: { ...NO_RATE_LIMITS, key_rpm: 1 } });
    await inOneRateWindow();
    expect((await post(hello, { 'x-api-key': limited.key })).status).toBe(200);
    const res = await post(hello, { 'x-api-key': limited.key });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectError(res, 429, 'rate_limit_error');
  });

  it("passes a provider's 429 on with its Retry-After, and its 500 as 502 api_error", async () => {
    const limited = await post({ ...hello, model: 'wire-429' });
    expect(limited.headers.get('retry-after')).toBe('7');
    await expectError(limited, 429, 'rate_limit_error');
    const res = await post({ ...hello, model: 'wire-500' });
    const requestId = res.headers.get('x-request-id')!;
    await expectError(res, 502, 'api_error');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'error', status: 502, error_code: 'UPSTREAM_ERROR', provider: 'wire' })]);
    expect(usage).toEqual([expect.objectContaining({ finish_reason: 'error', tokens: { input: 0, output: 0, total: 0, cached: 0 } })]);
  });

  it('413 request_too_large, 415 and 405 in the same shape', async () => {
    await expectError(await post({ ...hello, messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }), 413, 'request_too_large');
    await expectError(await post(JSON.stringify(hello), { 'content-type': 'text/plain' }), 415, 'invalid_request_error');
    await expectError(await fetch(`${h.url}/v1/messages`), 405, 'invalid_request_error');
    await expectError(await fetch(`${h.url}/v1/messages/count_tokens`), 405, 'invalid_request_error');
  });
});

describe('streams cut short', () => {
  it('ends a stream whose key is deleted with an authentication_error event and no message_stop', async () => {
    const doomed = await projectTestKey(h.redis, h.keys);
    const res = await post({ ...hello, model: 'claude-slow', stream: true, messages: [{ role: 'user', content: 'a long answer '.repeat(30) }] }, { 'x-api-key': doomed.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('content_block_delta')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await deleteTestKey(h.redis, h.keys, doomed);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const names = eventNames(text);
    expect(names[0]).toBe('message_start');
    expect(names.at(-1)).toBe('error');
    expect(names).not.toContain('message_stop');
    expect(names).not.toContain('message_delta');
    expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"authentication_error","message":"The API key was deleted."}}\n\n');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'auth_failed', status: 200, error_code: 'UNAUTHORIZED' })]);
    expect(usage).toEqual([expect.objectContaining({ finish_reason: 'cancelled', stream: true })]);
    await expectError(await post(hello, { 'x-api-key': doomed.key }), 401, 'authentication_error');
  });

  it('ends a stream whose provider fails mid-way with an api_error event and no message_stop', async () => {
    const res = await post({ ...hello, model: 'wire-stream-error', stream: true });
    expect(res.status).toBe(200);
    const text = await readAll(res);
    const names = eventNames(text);
    expect(names[0]).toBe('message_start');
    expect(names).toContain('content_block_delta');
    expect(names.at(-1)).toBe('error');
    expect(names).not.toContain('message_stop');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/);
  });

  it('stops the provider when the client leaves mid-stream, recorded as cancelled', async () => {
    const res = await post({ ...hello, model: 'claude-slow', stream: true, messages: [{ role: 'user', content: 'a long answer '.repeat(30) }] });
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await eventually(async () => (await recordsOf(requestId)).audit.length === 1, 'the cut stream recorded');
    const { audit, usage } = await recordsOf(requestId);
    expect(audit[0]).toMatchObject({ outcome: 'cancelled' });
    expect(usage).toEqual([expect.objectContaining({ finish_reason: 'cancelled' })]);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  const count = (body: unknown, headers: Record<string, string> = {}) => post(body, headers, '/v1/messages/count_tokens');

  it('answers the estimate, audited once with no usage record', async () => {
    const res = await count({ model: 'claude-mock', messages: [{ role: 'user', content: 'count me' }] });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const body = (await res.json()) as { input_tokens: number };
    expect(Object.keys(body)).toEqual(['input_tokens']);
    expect(body.input_tokens).toBeGreaterThan(0);
    const { audit, usage } = await recordsOf(requestId);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'success', status: 200, model: 'claude-mock', provider: null, key_id: key.id, endpoint: 'messages.count_tokens' })]);
    expect(usage).toEqual([]);
  });

  it('audits a refused body with the model it named', async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const res = await post({ model: 'claude-mock', max_tokens: 10, temperature: 7, messages: [{ role: 'user', content: 'x' }] }, {}, path);
      expect(res.status).toBe(400);
      const { audit } = await recordsOf(res.headers.get('x-request-id')!);
      expect(audit).toEqual([expect.objectContaining({ outcome: 'error', status: 400, model: 'claude-mock', endpoint: path === '/v1/messages' ? 'messages' : 'messages.count_tokens' })]);
    }
  });

  it('grows with the prompt', async () => {
    const small = (await (await count({ model: 'claude-mock', messages: [{ role: 'user', content: 'hi' }] })).json()) as { input_tokens: number };
    const large = (await (await count({ model: 'claude-mock', system: 'You are a careful assistant.', messages: [{ role: 'user', content: 'hi '.repeat(200) }] })).json()) as { input_tokens: number };
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 100);
  });

  it('refuses like POST /v1/messages does, in the same shape', async () => {
    await expectError(await count({ model: 'claude-mock', messages: [] }), 400, 'invalid_request_error');
    await expectError(await count({ model: 'claude-nowhere', messages: [{ role: 'user', content: 'x' }] }), 404, 'not_found_error');
    await expectError(await count({ model: 'claude-mock', messages: [{ role: 'user', content: 'x' }] }, { 'x-api-key': '' }), 401, 'authentication_error');
    const narrow = await keyWithPolicy({ allowed_models: ['claude-slow'] });
    await expectError(await count({ model: 'claude-mock', messages: [{ role: 'user', content: 'x' }] }, { 'x-api-key': narrow.key }), 403, 'permission_error');
    await expectError(await count('not json'), 400, 'invalid_request_error');
  });
});

/** Bodies built to break a parser: wrong types at every path, broken JSON, odd encodings. */
function hostileBodies(): (string | Uint8Array)[] {
  const valid = {
    model: 'claude-mock',
    max_tokens: 50,
    system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }] }] },
    ],
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'f' },
    stop_sequences: ['x'],
    metadata: { user_id: 'u' },
  };
  const strings = ['model', 'messages.0.role', 'messages.0.content.0.type', 'messages.0.content.0.text', 'messages.0.content.1.source.type', 'messages.0.content.1.source.media_type', 'messages.0.content.1.source.data', 'messages.1.content.0.id', 'messages.1.content.0.name', 'messages.2.content.0.tool_use_id', 'messages.2.content.0.content.0.text', 'system.0.text', 'system.0.type', 'tools.0.name', 'tool_choice.type', 'tool_choice.name', 'stop_sequences.0', 'metadata.user_id'];
  const numbers = ['max_tokens', 'temperature', 'top_p'];
  const objects = ['messages.0', 'messages.0.content.0', 'messages.0.content.1.source', 'messages.1.content.0.input', 'tools.0', 'tools.0.input_schema', 'tool_choice', 'metadata', 'system.0', 'thinking', 'output_config'];
  const arrays = ['messages', 'tools', 'stop_sequences'];
  // A string is valid content and a valid system prompt.
  const stringOrArrays = ['messages.1.content', 'system'];
  const bodies: (string | Uint8Array)[] = [];
  const mutate = (path: string, value: unknown) => {
    const body = structuredClone(valid) as Record<string, unknown>;
    const steps = path.split('.');
    let at: Record<string, unknown> = body;
    for (const step of steps.slice(0, -1)) {
      at[step] ??= {};
      at = at[step] as Record<string, unknown>;
    }
    at[steps.at(-1)!] = value;
    bodies.push(JSON.stringify(body));
  };
  for (const path of strings) for (const value of [42, true, [], {}, ['a'], { a: 'b' }]) mutate(path, value);
  for (const path of numbers) for (const value of ['1', true, [], {}, -5, 2.5]) mutate(path, value);
  for (const path of objects) for (const value of ['x', 42, true, [], [1]]) mutate(path, value);
  for (const path of arrays) for (const value of ['x', 42, true, { a: 1 }]) mutate(path, value);
  for (const path of stringOrArrays) for (const value of [42, true, { a: 1 }]) mutate(path, value);
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  bodies.push(
    '',
    '{',
    'null',
    '[]',
    '"a string"',
    '12345',
    'true',
    '{"model":"claude-mock","max_tokens":10,"messages":[{"role":"user","content":"x"}]',
    '{"model":"claude-mock","max_tokens":1e400,"messages":[{"role":"user","content":"x"}]}',
    '{"__proto__":{"max_tokens":10},"model":"claude-mock","messages":[{"role":"user","content":"x"}]}',
    '{"model":"claude-mock","max_tokens":10,"messages":[{"role":"user","content":"x"}],"constructor":{"prototype":{}}}',
    `{"model":"claude-mock","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":${deep(9_000)}}]}]}`,
    `{"model":"claude-mock","max_tokens":10,"tools":[{"name":"f","input_schema":${deep(9_000)}}],"messages":[{"role":"user","content":"x"}]}`,
    '['.repeat(30_000) + ']'.repeat(30_000),
    '{"model":"claude-mock","max_tokens":10,"messages":[{"role":"user","content":"x"}],"stream":"true"}',
    '{"model":"","max_tokens":10,"messages":[{"role":"user","content":"x"}]}',
    `{"model":"${'m'.repeat(300)}","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`,
  );
  // Every fourth prefix of a valid body: JSON cut short anywhere.
  const whole = JSON.stringify(valid);
  for (let i = 0; i < whole.length; i += 4) bodies.push(whole.slice(0, i));
  bodies.push(Buffer.concat([Buffer.from('{"model":"claude-mock","max_tokens":10,"messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]));
  return bodies;
}

describe('hostile bodies', () => {
  it('answers every malformed body with a 4xx in Anthropic\'s shape, and keeps serving', async () => {
    const bodies = hostileBodies();
    expect(bodies.length).toBeGreaterThan(250);
    const statuses = new Map<number, number>();
    for (const body of bodies) {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        const res = await post(body, {}, path);
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status < 400 || res.status >= 500) throw new Error(`${path} answered ${res.status} to ${String(body).slice(0, 200)}: ${text.slice(0, 200)}`);
        const parsed = JSON.parse(text) as AnthropicError;
        expect(parsed.type).toBe('error');
        expect(typeof parsed.error.message).toBe('string');
      }
    }
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true);
    expect((await post(hello)).status).toBe(200);
  });
});

describe('records', () => {
  it('leaves one audit event per request, with the same id as its usage record, and never a secret', async () => {
    const { usage, audit, raw } = await h.records();
    const ids = new Set(audit.map((a) => a.id));
    expect(ids.size).toBe(audit.length);
    for (const u of usage) expect(ids).toContain(u.id);
    expect(new Set(audit.map((a) => a.outcome))).toEqual(new Set(['success', 'auth_failed', 'error', 'policy_blocked', 'cancelled']));
    expect(raw.join('\n')).not.toContain(key.key);
  });
});
