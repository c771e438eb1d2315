import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProjectPolicy, NO_RATE_LIMITS } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerChat } from './chat-wire-answer.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Parameters a translation cannot carry, judged at admission for every target of the route: what
 * only tunes the answer is dropped and named in `x-gateway-dropped-params` (or refused, for a
 * project with `unsupported_params: "refuse"`); what would change the answer's shape is refused
 * 400 UNSUPPORTED_PARAMETER before any provider is called or anything counted — on a weighted
 * route over an OpenAI and an Anthropic target, whichever target would be drawn.
 */
let anthropic: RunningWireMock;
let openai: RunningWireMock;
let h: Harness;
let key: TestKey;

function message(req: WireRequest, res: ServerResponse): void {
  sendJson(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: req.body.model, content: [{ type: 'text', text: 'from claude' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 2 } });
}

beforeAll(async () => {
  anthropic = await startWireMock(message);
  openai = await startWireMock((req, res) => answerChat(req, res, { text: 'from gpt' }, { prompt_tokens: 10, completion_tokens: 2 }));
  h = await startHarness(
    'unsupported-params',
    `providers:
  - name: claude
    type: anthropic
    base_url: ${anthropic.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: [claude-only, mixed]
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
});

afterAll(async () => {
  await h?.stop();
  await anthropic?.close();
  await openai?.close();
});

function chat(apiKey: string, body: Record<string, unknown>, requestId: string): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-request-id': requestId },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], ...body }),
  });
}

describe('parameters a translation cannot carry', () => {
  it('drops what only tunes the answer, names it in x-gateway-dropped-params, and sends the rest', async () => {
    const client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'claude-only', messages: [{ role: 'user', content: 'Hi' }], seed: 7, frequency_penalty: 0.5, temperature: 0.3 }).withResponse();
    expect(data.choices[0]?.message.content).toBe('from claude');
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed,frequency_penalty');
    const sent = anthropic.lastRequest()!.body;
    expect(sent).toMatchObject({ model: 'claude-only', temperature: 0.3 });
    expect(sent).not.toHaveProperty('seed');
    expect(sent).not.toHaveProperty('frequency_penalty');
  });

  it('sends nothing and drops nothing for a provider that speaks the protocol', async () => {
    const res = await chat(key.key, { model: 'mixed', seed: 7 }, 'mixed-seed-0');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    const served = body.choices[0]?.message.content;
    expect(res.headers.get('x-gateway-dropped-params')).toBe(served === 'from gpt' ? null : 'seed');
  });

  it('refuses what would change the answer before any provider is called or anything counted, on every draw of a weighted route', async () => {
    const before = { anthropic: anthropic.requests(), openai: openai.requests() };
    for (let i = 0; i < 8; i++) {
      const res = await chat(key.key, { model: 'mixed', n: 2 }, `mixed-n-${i}`);
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { code: string; param: string; type: string; message: string } };
      expect(err.error).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', param: 'n', type: 'invalid_request_error' });
      expect(err.error.message).toContain('Anthropic');
    }
    expect({ anthropic: anthropic.requests(), openai: openai.requests() }).toEqual(before);
    const { usage, audit } = await h.records();
    expect(usage.filter((u) => u.request_id.startsWith('mixed-n-'))).toHaveLength(0);
    const events = audit.filter((a) => a.request_id.startsWith('mixed-n-'));
    expect(events).toHaveLength(8);
    for (const event of events) expect(event).toMatchObject({ status: 400, error_code: 'UNSUPPORTED_PARAMETER', model: 'mixed' });
  });

  it("refuses a value one target's translation cannot write (a content part it has no block for) on every draw, before any provider is called", async () => {
    const before = { anthropic: anthropic.requests(), openai: openai.requests() };
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'What is said?' }, { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }];
    for (let i = 0; i < 8; i++) {
      const res = await chat(key.key, { model: 'mixed', messages }, `mixed-audio-${i}`);
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(err.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'messages[0].content[1]' });
      expect(err.error.message).toContain('Anthropic');
    }
    expect({ anthropic: anthropic.requests(), openai: openai.requests() }).toEqual(before);
    const { audit } = await h.records();
    expect(audit.filter((a) => a.request_id.startsWith('mixed-audio-'))).toHaveLength(8);
  });

  it('refuses drops for a project that says unsupported_params: refuse, naming the first', async () => {
    const strict = await projectTestKey(h.redis, h.keys);
    await h.redis.set(
      h.keys.projectPolicy(strict.projectId),
      encodeProjectPolicy({ id: strict.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null, unsupported_params: 'refuse' }),
    );
    const before = anthropic.requests();
    const res = await chat(strict.key, { model: 'claude-only', seed: 7, logit_bias: { '1': 2 } }, 'strict-seed');
    expect(res.status).toBe(400);
    const err = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(err.error).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', param: 'seed' });
    expect(err.error.message).toContain('unsupported_params');
    expect(anthropic.requests()).toBe(before);
    // What the translation carries is served as ever.
    expect((await chat(strict.key, { model: 'claude-only', temperature: 0.2 }, 'strict-plain')).status).toBe(200);
  });
});
