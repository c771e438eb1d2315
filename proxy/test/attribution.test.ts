import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, UsageRecord } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Cost attribution through the real proxy with the official SDKs: `x-gateway-tags` over the key's
 * default tags, and the client's end user (OpenAI `user`, Anthropic `metadata.user_id`), on the
 * request's usage record and audit event; a bad tag refused 400 naming it, and audited.
 */
let wire: RunningWireMock;
let h: Harness;
let plain: TestKey;
let tagged: TestKey;

beforeAll(async () => {
  wire = await startOpenAiWireMock();
  h = await startHarness(
    'attribution',
    `providers:
  - name: builtin
    type: mock
    models: [m]
  - name: wire
    type: openai
    base_url: ${wire.baseUrl}/v1
    models: [{ id: e, upstream: conf-text }]
`,
  );
  plain = await projectTestKey(h.redis, h.keys);
  tagged = await projectTestKey(h.redis, h.keys, { tags: { team: 'search', env: 'prod' } });
});

afterAll(async () => {
  await h?.stop();
  await wire?.close();
});

const openai = (key: TestKey, headers: Record<string, string> = {}) => new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0, defaultHeaders: headers });

/** The usage record and audit event of one request (its `x-request-id` answer header). */
async function recordsOf(requestId: string | null): Promise<{ usage: UsageRecord | undefined; audit: AuditEvent | undefined }> {
  expect(requestId).toBeTruthy();
  const { usage, audit } = await h.records();
  return { usage: usage.find((u) => u.request_id === requestId), audit: audit.find((a) => a.request_id === requestId) };
}

describe('tags and end users', () => {
  it('records x-gateway-tags and the OpenAI user on chat completions', async () => {
    const { response } = await openai(plain, { 'x-gateway-tags': 'team=search, feature=rag' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], user: 'alice@example.com' })
      .withResponse();
    const { usage, audit } = await recordsOf(response.headers.get('x-request-id'));
    expect(usage?.tags).toEqual({ team: 'search', feature: 'rag' });
    expect(usage?.end_user).toBe('alice@example.com');
    expect(audit?.tags).toEqual({ team: 'search', feature: 'rag' });
    expect(audit?.end_user).toBe('alice@example.com');
  });

  it("applies the key's default tags, the request's winning per tag key", async () => {
    const { response } = await openai(tagged, { 'x-gateway-tags': 'team=ads' }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const { usage, audit } = await recordsOf(response.headers.get('x-request-id'));
    expect(usage?.tags).toEqual({ team: 'ads', env: 'prod' });
    expect(audit?.tags).toEqual({ team: 'ads', env: 'prod' });
    expect(usage?.end_user).toBeUndefined();
    const { response: bare } = await openai(tagged).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect((await recordsOf(bare.headers.get('x-request-id'))).usage?.tags).toEqual({ team: 'search', env: 'prod' });
  });

  it('leaves the records of a request without tags or user as they were', async () => {
    const { response } = await openai(plain).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const { usage, audit } = await recordsOf(response.headers.get('x-request-id'));
    expect(usage).toBeDefined();
    expect(usage).not.toHaveProperty('tags');
    expect(usage).not.toHaveProperty('end_user');
    expect(audit).not.toHaveProperty('tags');
    expect(audit).not.toHaveProperty('end_user');
  });

  it('records the Anthropic metadata.user_id on /v1/messages', async () => {
    const client = new Anthropic({ apiKey: plain.key, baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-gateway-tags': 'team=claude' } });
    const { response } = await client.messages.create({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'user-42' } }).withResponse();
    const { usage, audit } = await recordsOf(response.headers.get('x-request-id'));
    expect(usage?.end_user).toBe('user-42');
    expect(usage?.tags).toEqual({ team: 'claude' });
    expect(usage?.endpoint).toBe('messages');
    expect(audit?.end_user).toBe('user-42');
  });

  it('records the user of /v1/responses and /v1/embeddings', async () => {
    const responses = await openai(plain, { 'x-gateway-tags': 'feature=agent' }).responses.create({ model: 'm', input: 'hi', user: 'bob' }).withResponse();
    const viaResponses = await recordsOf(responses.response.headers.get('x-request-id'));
    expect(viaResponses.usage).toMatchObject({ end_user: 'bob', tags: { feature: 'agent' }, endpoint: 'responses' });
    const embeddings = await openai(plain, { 'x-gateway-tags': 'feature=search' }).embeddings.create({ model: 'e', input: 'hi', user: 'carol' }).withResponse();
    const viaEmbeddings = await recordsOf(embeddings.response.headers.get('x-request-id'));
    expect(viaEmbeddings.usage).toMatchObject({ end_user: 'carol', tags: { feature: 'search' }, endpoint: 'embeddings' });
  });

  it('cuts an end user longer than 128 characters, and still serves the request', async () => {
    const long = 'u'.repeat(300);
    const { response } = await openai(plain).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], user: long }).withResponse();
    expect(response.status).toBe(200);
    expect((await recordsOf(response.headers.get('x-request-id'))).usage?.end_user).toBe('u'.repeat(128));
  });

  it('refuses a bad tag with a 400 naming it, audited, before any provider call', async () => {
    for (const [header, named] of [
      ['Team=search', '`Team`'],
      ['team=a b', 'tag `team`'],
      ['team', '`team`'],
      [Array.from({ length: 11 }, (_, i) => `k${i}=v`).join(','), 'at most 10'],
    ] as const) {
      const res = await fetch(`${h.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': plain.key, 'x-gateway-tags': header },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', param: 'x-gateway-tags' });
      expect(error.message).toContain(named);
      const { usage, audit } = await recordsOf(res.headers.get('x-request-id'));
      expect(usage).toBeUndefined();
      expect(audit).toMatchObject({ outcome: 'error', status: 400, error_code: 'INVALID_REQUEST', provider: null });
    }
  });

  it('refuses a bad tag in the Anthropic error shape on /v1/messages', async () => {
    const res = await fetch(`${h.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': plain.key, 'anthropic-version': '2023-06-01', 'x-gateway-tags': 'a=b,c' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.message).toContain('`c`');
  });
});
