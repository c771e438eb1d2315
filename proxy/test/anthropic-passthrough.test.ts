import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startAnthropicWireMock } from './wire-mocks/anthropic-wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * POST /v1/messages served by an Anthropic-typed provider: the client's body goes untranslated
 * (model name mapped, key swapped) and Anthropic's answer comes back as it was sent, whole and
 * streamed; the request is metered and recorded as any other.
 */
let mock: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: Anthropic;

beforeAll(async () => {
  mock = await startAnthropicWireMock();
  h = await startHarness(
    'anthropic-native',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${mock.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: [{ id: smart, upstream: conf-text }]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new Anthropic({ apiKey: key.key, baseURL: h.url, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await mock?.close();
});

// Prompt caching marks are not part of the translation: only an untranslated body keeps them.
const system = [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }];

describe('Anthropic Messages to an Anthropic-typed provider', () => {
  it('sends the body as it came, with the model mapped and the provider key', async () => {
    const message = await client.messages.create({ model: 'smart', max_tokens: 50, system, messages: [{ role: 'user', content: 'Hello' }] });
    const seen = mock.lastRequest();
    expect(seen?.body).toEqual({ model: 'conf-text', max_tokens: 50, system, messages: [{ role: 'user', content: 'Hello' }] });
    expect(seen?.headers['x-api-key']).toBe('sk-ant-provider-secret-0123456789');
    expect(JSON.stringify(seen)).not.toContain(key.key);
    // Anthropic's own answer, untouched: its id and its model name.
    expect(message.id).toBe('msg_01wire');
    expect(message.model).toBe('conf-text-20250101');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello there' }]);
  });

  it('streams Anthropic\'s own events, ping included, and meters them', async () => {
    const res = await fetch(`${h.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'smart', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const text = await res.text();
    expect(text).toContain('event: ping');
    expect(text).toContain('event: message_stop');
    expect((await mock.lastRequest())?.body).toMatchObject({ model: 'conf-text', stream: true });
    const stream = client.messages.stream({ model: 'smart', max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }] });
    expect((await stream.finalMessage()).content).toEqual([{ type: 'text', text: 'Hello there' }]);
    const { usage, audit } = await h.records();
    const record = usage.find((u) => u.request_id === requestId);
    expect(record).toMatchObject({ provider: 'claude', endpoint: 'messages', stream: true, finish_reason: 'stop' });
    expect(record?.tokens.output).toBe(2);
    expect(audit.find((a) => a.request_id === requestId)).toMatchObject({ endpoint: 'messages', status: 200, attempts: 1 });
  });
});
