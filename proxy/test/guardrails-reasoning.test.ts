import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { startWireMock, type RunningWireMock } from '../../test-support/wire-mock.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { answerAnthropic } from './anthropic-thinking-answer.js';

/**
 * Output guardrails over a model's reasoning: Claude's thought, given back as `reasoning_content`,
 * is checked as the answer's text is, whole and streamed. A mask rewrites it and withholds the
 * thinking blocks (they repeat the thought unmasked); a block withholds it with the answer; a
 * clean thought keeps its blocks for the client to send back.
 */
let cp: ControlPlaneHarness;
let proxy: Proxy;
let upstream: RunningWireMock;
let thought = 'Write to ann@example.com about the weather.';

beforeAll(async () => {
  upstream = await startWireMock((req, res) => answerAnthropic(req, res, { text: 'Done.' }, thought));
  cp = await startControlPlane('guardrails-reasoning');
  const dir = mkdtempSync(join(tmpdir(), 'gw-guardrails-reasoning-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: claude\n    type: anthropic\n    base_url: ${upstream.baseUrl}\n    api_key: sk-ant-provider-secret-0123456789\n    models: [claude-1]\n`);
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' });
});

afterAll(async () => {
  await proxy?.drain();
  await cp?.close();
  await upstream?.close();
});

let projects = 0;
async function keyWith(guardrails: unknown[]): Promise<OpenAI> {
  const created = await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: `r ${++projects}` } });
  const key = await cp.api<{ key: string }>('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: guardrails });
  return new OpenAI({ apiKey: key.body.key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
}

type Thinking = { reasoning_content?: string; thinking_blocks?: unknown[] };
const ask = { model: 'claude-1', messages: [{ role: 'user' as const, content: 'Hi' }], reasoning_effort: 'low' as const };

async function streamed(client: OpenAI): Promise<{ reasoning: string; content: string; blocks: unknown[]; finish: string | null }> {
  const stream = await client.chat.completions.create({ ...ask, stream: true });
  const out = { reasoning: '', content: '', blocks: [] as unknown[], finish: null as string | null };
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as (Thinking & { content?: string | null }) | undefined;
    out.reasoning += delta?.reasoning_content ?? '';
    out.content += delta?.content ?? '';
    out.blocks.push(...(delta?.thinking_blocks ?? []));
    out.finish = chunk.choices[0]?.finish_reason ?? out.finish;
  }
  return out;
}

describe('output guardrails over reasoning', () => {
  it('masks the reasoning, whole and streamed, and withholds the thinking blocks that repeat it', async () => {
    const client = await keyWith([{ id: 'out-pii', stage: 'output', action: 'mask', type: 'pii', entities: ['email'] }]);
    const whole = (await client.chat.completions.create(ask)).choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & Thinking;
    expect(whole.reasoning_content).toBe('Write to <EMAIL_1> about the weather.');
    expect(whole).not.toHaveProperty('thinking_blocks');
    expect(whole.content).toBe('Done.');
    const stream = await streamed(client);
    expect(stream).toEqual({ reasoning: 'Write to <EMAIL_1> about the weather.', content: 'Done.', blocks: [], finish: 'stop' });
  });

  it('keeps the thinking blocks of reasoning no guard changed', async () => {
    const client = await keyWith([{ id: 'out-pii', stage: 'output', action: 'mask', type: 'pii', entities: ['email'] }]);
    thought = 'Say it is done.';
    try {
      const whole = (await client.chat.completions.create(ask)).choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & Thinking;
      expect(whole.thinking_blocks).toHaveLength(1);
      expect((await streamed(client)).blocks).toHaveLength(1);
    } finally {
      thought = 'Write to ann@example.com about the weather.';
    }
  });

  it('blocks on the reasoning as on the answer, withholding both', async () => {
    const client = await keyWith([{ id: 'no-weather', stage: 'output', action: 'block', type: 'regex', patterns: ['weather'] }]);
    const whole = (await client.chat.completions.create(ask)).choices[0]!;
    expect(whole.finish_reason).toBe('content_filter');
    expect(whole.message).not.toHaveProperty('reasoning_content');
    expect(whole.message).not.toHaveProperty('thinking_blocks');
    const stream = await streamed(client);
    expect(stream.finish).toBe('content_filter');
    expect(stream.reasoning).not.toContain('weather');
    expect(stream.blocks).toEqual([]);
  });
});
