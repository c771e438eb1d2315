import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGuardrailSet, encodeProjectPolicy, NO_RATE_LIMITS } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerChat } from './chat-wire-answer.js';
import { startHarness, type Harness } from './harness.js';

/**
 * /v1/messages on a native route (every provider of the model speaks Messages): the body goes as
 * the client sent it, fields the gateway does not know or cannot translate included (what Claude
 * Code sends: context_management, adaptive thinking, output_config.effort, a system message among
 * the messages), with the client's `anthropic-*` headers and query string. A route that could
 * draw a provider of another protocol answers such a body the same way every time: translated
 * where drawn to the other protocol (what only tunes dropped and named), refused at parse before
 * any provider is called when the translation cannot carry it.
 */
let anthropic: RunningWireMock;
let openai: RunningWireMock;
let h: Harness;
let key: TestKey;
let client: Anthropic;

function message(req: WireRequest, res: ServerResponse): void {
  sendJson(res, 200, {
    id: 'msg_native',
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content: [{ type: 'text', text: 'done' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 1 },
  });
}

beforeAll(async () => {
  anthropic = await startWireMock(message);
  openai = await startWireMock((req, res) => answerChat(req, res, { text: 'done' }, { prompt_tokens: 12, completion_tokens: 1 }));
  h = await startHarness(
    'anthropic-native-route',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${anthropic.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: [{ id: claude-agent-1, upstream: up-sonnet }, mixed]
  - name: gpt
    type: openai
    base_url: ${openai.baseUrl}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: [mixed]
routes:
  mixed: { strategy: weighted, weights: { claude: 50, gpt: 50 } }
`,
  );
  key = await projectTestKey(h.redis, h.keys);
  client = new Anthropic({ apiKey: key.key, baseURL: h.url, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await anthropic?.close();
  await openai?.close();
});

/** A turn as Claude Code 2.1 sends it by default. */
const agentTurn = (model: string) => ({
  model,
  max_tokens: 16000,
  stream: false,
  system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'I should run ls.', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md' }] },
    { role: 'system', content: 'The user switched to plan mode.' },
    { role: 'user', content: 'Go on.' },
  ],
  thinking: { type: 'adaptive' },
  output_config: { effort: 'high' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  tools: [{ name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
  metadata: { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: '3f1c1e56-7c1f-4a5e-9a47-6d3b2b1a0c9e' }) },
});

describe('a native /v1/messages route', () => {
  it("sends Claude Code's turn as it came, with its betas and query string, and records the session as the end user", async () => {
    const body = agentTurn('claude-agent-1');
    // The official SDK's beta namespace: the anthropic-beta header, as Claude Code uses it.
    const answer = await client.beta.messages.create(body as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming, {
      headers: { 'anthropic-beta': 'context-management-2025-06-27,interleaved-thinking-2025-05-14', 'x-request-id': 'native-turn-1' },
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'done' }]);
    const seen = anthropic.lastRequest()!;
    expect(seen.body).toEqual({ ...body, model: 'up-sonnet' });
    expect(seen.headers['anthropic-beta']).toBe('context-management-2025-06-27,interleaved-thinking-2025-05-14');
    expect(seen.headers['x-api-key']).toBe('sk-ant-provider-secret-0123456789');
    expect(JSON.stringify(seen.headers)).not.toContain(key.key);
    const { usage, audit } = await h.records();
    const record = usage.find((u) => u.request_id === 'native-turn-1');
    expect(record).toMatchObject({ provider: 'claude', endpoint: 'messages', end_user: '3f1c1e56-7c1f-4a5e-9a47-6d3b2b1a0c9e', tokens: { input: 12, output: 1 } });
    expect(audit.filter((a) => a.request_id === 'native-turn-1')).toHaveLength(1);
  });

  it("passes the query string and the client's API version, as Claude Code's `?beta=true` calls send them", async () => {
    const res = await fetch(`${h.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key.key,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'oauth-2025-04-20',
        'anthropic-dangerous-direct-browser-access': 'true',
        'x-stainless-os': 'Linux',
        'x-header-of-tomorrow': 'kept',
        cookie: 'session=secret',
        'x-goog-api-key': 'AIza-not-for-anthropic',
        'x-forwarded-for': '203.0.113.7',
        'x-gateway-tags': 'team=a',
      },
      body: JSON.stringify(agentTurn('claude-agent-1')),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const seen = anthropic.lastRequest()!;
    expect(seen.path).toBe('/v1/messages?beta=true');
    expect(seen.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'oauth-2025-04-20', 'anthropic-dangerous-direct-browser-access': 'true' });
    // A header the gateway does not know goes on; credentials, the client's whereabouts and the gateway's own do not.
    expect(seen.headers).toMatchObject({ 'x-stainless-os': 'Linux', 'x-header-of-tomorrow': 'kept' });
    expect(seen.headers).not.toHaveProperty('cookie');
    expect(seen.headers).not.toHaveProperty('x-goog-api-key');
    expect(seen.headers).not.toHaveProperty('x-forwarded-for');
    expect(seen.headers).not.toHaveProperty('x-gateway-tags');
    expect(seen.headers['x-api-key']).toBe('sk-ant-provider-secret-0123456789');
    // Without the client's version the pinned one goes.
    await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify({ model: 'claude-agent-1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(anthropic.lastRequest()!.headers['anthropic-version']).toBe('2023-06-01');
    expect(anthropic.lastRequest()!.path).toBe('/v1/messages');
  });

  it("sends the client's own bytes, only the model id written in place", async () => {
    // Spacing, key order and a number's form as only the client's bytes have them.
    const sent = '{ "max_tokens": 5,\n  "model" : "claude-agent-1", "temperature": 1.0, "messages": [ {"role": "user", "content": "say \\"model\\": hi"} ], "x_future": {"kept": true} }';
    const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: sent });
    expect(res.status).toBe(200);
    expect(anthropic.lastRequest()!.raw?.toString()).toBe(sent.replace('"claude-agent-1"', '"up-sonnet"'));
  });

  it('counts the tokens of such a turn', async () => {
    const { max_tokens: _max, stream: _stream, ...countable } = agentTurn('claude-agent-1');
    const res = await fetch(`${h.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify(countable) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(10);
  });

  it('still answers a malformed body with the provider\'s own judgement, the fields the gateway reads checked', async () => {
    const res = await fetch(`${h.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'claude-agent-1', messages: [{ role: 'user', content: 'hi' }], stream: 'yes', thinking: { type: 'adaptive' } }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('max_tokens');
  });

  it('reads any shape a native body takes without failing: what it does not know goes to the provider to judge', async () => {
    const base = agentTurn('claude-agent-1');
    const shapes: unknown[] = [7, 'text', null, [], {}, [1, 'x'], { type: 7 }, [{ type: 'text', text: 5 }], [{ type: 'image', source: 'no' }], [{ type: 'tool_use', input: [[[[]]]] }]];
    for (const shape of shapes) {
      for (const field of ['system', 'messages', 'tools', 'metadata', 'thinking', 'output_config', 'context_management']) {
        const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify({ ...base, [field]: shape }) });
        expect(res.status, `${field}: ${JSON.stringify(shape)}`).toBeLessThan(500);
        await res.text();
      }
      const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify({ ...base, messages: [{ role: 'user', content: shape }, shape] }) });
      expect(res.status).toBeLessThan(500);
      await res.text();
    }
    expect((await client.messages.create({ model: 'claude-agent-1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).content).toEqual([{ type: 'text', text: 'done' }]);
  });

  it('answers the same body the same way on a route that may draw a provider of another protocol, naming what the translation dropped', async () => {
    const drawn = { anthropic: 0, openai: 0 };
    for (let i = 0; i < 16; i++) {
      const before = { anthropic: anthropic.requests(), openai: openai.requests() };
      const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify(agentTurn('mixed')) });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { type: string; content: { type: string; text: string }[] };
      expect(answer).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'done' }] });
      if (openai.requests() > before.openai) {
        drawn.openai++;
        // Translated: what only tunes the answer was left out, and said so.
        expect(res.headers.get('x-gateway-dropped-params')).toBe('context_management');
        expect(openai.lastRequest()?.body).toMatchObject({ reasoning_effort: 'high' });
      } else {
        drawn.anthropic++;
        expect(res.headers.get('x-gateway-dropped-params')).toBeNull();
      }
    }
    expect(drawn.anthropic + drawn.openai).toBe(16);
  });

  it('refuses a body the translation cannot carry the same way on such a route, calling none', async () => {
    const before = { anthropic: anthropic.requests(), openai: openai.requests() };
    const body = { ...agentTurn('mixed'), tools: [...agentTurn('mixed').tools, { type: 'web_search_20250305', name: 'web_search' }] };
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { type: string; message: string } };
      expect(err.error.type).toBe('invalid_request_error');
      expect(err.error.message).toContain('tools.1.type');
    }
    expect({ anthropic: anthropic.requests(), openai: openai.requests() }).toEqual(before);
  });

  it('refuses a body only the native path carries when output guardrails need the translation', async () => {
    const guarded = await projectTestKey(h.redis, h.keys);
    await h.redis.set(h.keys.projectPolicy(guarded.projectId), encodeProjectPolicy({ id: guarded.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null }));
    await h.redis.set(h.keys.projectGuardrails(guarded.projectId), encodeGuardrailSet(guarded.projectId, [{ id: 'words', stage: 'output', type: 'regex', action: 'block', patterns: ['secret'] }]));
    const before = anthropic.requests();
    const serverTool = { ...agentTurn('claude-agent-1'), tools: [{ type: 'web_search_20250305', name: 'web_search' }] };
    const res = await fetch(`${h.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': guarded.key }, body: JSON.stringify(serverTool) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('tools.0.type');
    expect(anthropic.requests()).toBe(before);
    // A body the translation carries is served, guarded.
    const plain = await fetch(`${h.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': guarded.key },
      body: JSON.stringify({ model: 'claude-agent-1', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(plain.status).toBe(200);
  });
});
