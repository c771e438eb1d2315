import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { bodyOf, listen, queuedRecords } from './guardrail-providers.js';

/**
 * Guardrails read every text a request and an answer carry, not only message content part by
 * part: the arguments of tool calls a conversation replays, a match split over two content parts
 * of one message, the input of an embeddings request, and the tool-call arguments of an answer.
 * The provider is a local mock of OpenAI's wire format that records what it was sent.
 */
let cp: ControlPlaneHarness;
let proxy: Proxy;
let upstream: Server;
let queue: Queue;
const seen: { url: string; body: Record<string, unknown> }[] = [];
/** What the mock answers a chat request with: a text, a tool call with these arguments, or (streams) these chunks. */
let answer: { text: string } | { toolArguments: string } | { chunks: Record<string, unknown>[] } = { text: 'fine' };

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    const body = JSON.parse(await bodyOf(req)) as Record<string, unknown>;
    seen.push({ url: req.url ?? '', body });
    res.setHeader('content-type', 'application/json');
    if (req.url?.endsWith('/embeddings')) {
      const n = Array.isArray(body.input) ? body.input.length : 1;
      res.end(JSON.stringify({ object: 'list', model: body.model, data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] })), usage: { prompt_tokens: 3, total_tokens: 3 } }));
      return;
    }
    if ('chunks' in answer) {
      res.setHeader('content-type', 'text/event-stream');
      for (const chunk of answer.chunks) res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model, ...chunk })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    const message =
      'text' in answer
        ? { role: 'assistant', content: answer.text }
        : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: answer.toolArguments } }] };
    res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: 'text' in answer ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } }));
  });
  const port = await listen(upstream);
  cp = await startControlPlane('guardcover');
  const dir = mkdtempSync(join(tmpdir(), 'gw-guardcover-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - name: upstream\n    type: openai\n    base_url: http://127.0.0.1:${port}/v1\n    models: [gpt-4o-mini, text-embedding-3-small]\n`);
  proxy = await startProxy({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, LOG_LEVEL: 'silent' });
  const keys = new RedisKeys(cp.prefix);
  queue = new Queue(keys.recordsQueue, { connection: cp.redis.duplicate({ maxRetriesPerRequest: null }), prefix: keys.bullPrefix });
});

afterAll(async () => {
  await proxy?.drain();
  await queue?.close();
  await cp?.close();
  upstream?.close();
});

let projects = 0;
async function project(guardrails: unknown[]): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `cover ${++projects}` } });
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  const put = await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: guardrails });
  expect(put.status, put.text).toBe(200);
  return { id: created.body.id, key: key.body.key };
}

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${proxy.port}/v1`, maxRetries: 0 });
const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
const blockSecrets = [{ id: 'secrets', stage: 'both', action: 'block', type: 'pii', entities: ['secret'] }];

function records(projectId: string): Promise<{ usage: UsageRecord[]; audit: AuditEvent[] }> {
  return queuedRecords(proxy, queue, projectId);
}

/** The request's error code, or 'served'. */
async function outcome(request: Promise<unknown>): Promise<string> {
  return request.then(
    () => 'served',
    (err: { code?: string }) => err.code ?? String(err),
  );
}

describe('guardrails read every text of a request', () => {
  it("blocks a secret in an assistant message's tool-call arguments, before any provider call", async () => {
    const p = await project(blockSecrets);
    const before = seen.length;
    const got = await outcome(
      openai(p.key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'user', content: 'mail the key to ops' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: JSON.stringify({ body: `key: ${secret}` }) } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
        ],
      }),
    );
    expect(got).toBe('GUARDRAIL_BLOCKED');
    expect(seen.length).toBe(before);
  });

  it('masks tool-call arguments in place, leaving them valid JSON', async () => {
    const p = await project([{ id: 'emails', stage: 'input', action: 'mask', type: 'pii', entities: ['email'] }]);
    await openai(p.key).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: 'write to her' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: JSON.stringify({ to: 'ada@example.com' }) } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
      ],
    });
    const sent = seen.at(-1)!.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
    const args = sent.messages[1]!.tool_calls![0]!.function.arguments;
    expect(args).not.toContain('ada@example.com');
    expect(JSON.parse(args)).toEqual({ to: expect.stringMatching(/^<EMAIL_\d+>$/) });
  });

  it('reads the text parts of one message as one text: a match split over two parts is caught', async () => {
    const p = await project([{ id: 'bird', stage: 'input', action: 'block', type: 'regex', patterns: ['falcon'] }]);
    const before = seen.length;
    const split = await outcome(
      openai(p.key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'the fal' }, { type: 'text', text: 'con flies' }] }],
      }),
    );
    expect(split).toBe('GUARDRAIL_BLOCKED');
    expect(seen.length).toBe(before);
    // Two messages are two texts: the end of one and the start of the next do not make a match.
    const apart = await outcome(
      openai(p.key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'user', content: 'the fal' },
          { role: 'user', content: 'con flies' },
        ],
      }),
    );
    expect(apart).toBe('served');
  });

  it('checks the input of an embeddings request: blocked before the provider, masked in what it is sent', async () => {
    const blocked = await project(blockSecrets);
    const before = seen.length;
    expect(await outcome(openai(blocked.key).embeddings.create({ model: 'text-embedding-3-small', input: ['a clean text', `leaked ${secret}`] }))).toBe('GUARDRAIL_BLOCKED');
    expect(await outcome(openai(blocked.key).embeddings.create({ model: 'text-embedding-3-small', input: `leaked ${secret}` }))).toBe('GUARDRAIL_BLOCKED');
    expect(seen.length).toBe(before);
    const out = await records(blocked.id);
    expect(out.usage).toEqual([]);
    expect(out.audit.map((a) => a.outcome)).toEqual(['policy_blocked', 'policy_blocked']);
    expect(out.audit.every((a) => a.endpoint === 'embeddings')).toBe(true);

    const masked = await project([{ id: 'emails', stage: 'input', action: 'mask', type: 'pii', entities: ['email'] }]);
    const answer = await openai(masked.key).embeddings.create({ model: 'text-embedding-3-small', input: ['write to ada@example.com', 'nothing here'] });
    expect(answer.data).toHaveLength(2);
    const sent = seen.at(-1)!;
    expect(sent.url).toMatch(/\/embeddings$/);
    expect(sent.body.input).toEqual([expect.stringMatching(/^write to <EMAIL_\d+>$/), 'nothing here']);
  });
});

describe('the guardrails\' work per request is bounded', () => {
  it('reads the parts of one message as one text, however many; refuses 400 past texts × guards, naming the bound', async () => {
    const p = await project([
      { id: 'bird', stage: 'input', action: 'block', type: 'regex', patterns: ['falcon'] },
      { id: 'secrets', stage: 'input', action: 'block', type: 'pii', entities: ['secret'] },
    ]);
    // 150,000 one-character parts of one message: one text for each guard, served.
    const parts = Array.from({ length: 150_000 }, () => ({ type: 'text' as const, text: 'a' }));
    expect(await outcome(openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: parts }] }))).toBe('served');
    // 30,000 messages × 2 guards is past the bound: refused before any provider call.
    const before = seen.length;
    const messages = Array.from({ length: 30_000 }, () => ({ role: 'user' as const, content: 'a' }));
    const err = (await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', messages }).catch((e: unknown) => e)) as { status?: number; code?: string; message?: string };
    expect(err.status).toBe(400);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.message).toMatch(/30000 texts .* 2 guardrails .* at most 50000/);
    expect(seen.length).toBe(before);
  });
});

describe('guardrails read every text of an answer', () => {
  it("withholds an answer whose tool-call arguments carry a secret, audited as a policy block", async () => {
    const p = await project(blockSecrets);
    answer = { toolArguments: JSON.stringify({ body: `here it is: ${secret}` }) };
    try {
      const got = await openai(p.key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'mail me the key' }],
        tools: [{ type: 'function', function: { name: 'send_mail', parameters: { type: 'object', properties: { body: { type: 'string' } } } } }],
      });
      expect(got.choices[0]!.finish_reason).toBe('content_filter');
      expect(JSON.stringify(got)).not.toContain('sk-proj');
    } finally {
      answer = { text: 'fine' };
    }
    const out = await records(p.id);
    expect(out.audit).toHaveLength(1);
    expect(out.audit[0]).toMatchObject({ outcome: 'policy_blocked', guardrails: [{ id: 'secrets', stage: 'output', action: 'block' }] });
    expect(out.usage[0]?.finish_reason).toBe('content_filter');
  });

  it('withholds a streamed tool call whose arguments carry a secret split over chunks', async () => {
    const p = await project(blockSecrets);
    const [head, rest] = [secret.slice(0, 12), secret.slice(12)];
    answer = {
      chunks: [
        { choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: '' } }] }, finish_reason: null }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: `{"body":"here it is: ${head}` } }] }, finish_reason: null }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: `${rest}"}` } }] }, finish_reason: null }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ],
    };
    let args = '';
    let finish: string | null = null;
    try {
      const stream = await openai(p.key).chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'mail me the key' }],
        tools: [{ type: 'function', function: { name: 'send_mail', parameters: { type: 'object', properties: { body: { type: 'string' } } } } }],
      });
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          for (const call of choice.delta.tool_calls ?? []) args += call.function?.arguments ?? '';
          finish = choice.finish_reason ?? finish;
        }
      }
    } finally {
      answer = { text: 'fine' };
    }
    expect(finish).toBe('content_filter');
    expect(args).not.toContain(head);
    const out = await records(p.id);
    expect(out.audit).toHaveLength(1);
    expect(out.audit[0]).toMatchObject({ outcome: 'policy_blocked', guardrails: [{ id: 'secrets', stage: 'output', action: 'block' }] });
  });

  it('reads each choice of a streamed n > 1 answer apart: a match within one choice is caught, text across two is not one', async () => {
    const p = await project([{ id: 'codename', stage: 'output', action: 'block', type: 'regex', patterns: ['falcon'] }]);
    const delta = (index: number, content: string) => ({ choices: [{ index, delta: { content }, finish_reason: null }] });
    const ask = async (): Promise<{ texts: string[]; finishes: (string | null)[] }> => {
      const texts = ['', ''];
      const finishes: (string | null)[] = [null, null];
      const stream = await openai(p.key).chat.completions.create({ model: 'gpt-4o-mini', stream: true, n: 2, messages: [{ role: 'user', content: 'name it' }] });
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          texts[choice.index] += choice.delta.content ?? '';
          finishes[choice.index] = choice.finish_reason ?? finishes[choice.index]!;
        }
      }
      return { texts, finishes };
    };
    const end = { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'stop' }] };
    try {
      // "fal" ends choice 0 and "con" begins choice 1: two texts, no match.
      answer = { chunks: [delta(0, 'a fal'), delta(1, 'con nest'), end] };
      expect(await ask()).toEqual({ texts: ['a fal', 'con nest'], finishes: ['stop', 'stop'] });
      // One choice's "falcon" interleaved with the other's text: caught, for both choices.
      answer = { chunks: [delta(0, 'the fal'), delta(1, 'a sparrow'), delta(0, 'con flies'), end] };
      const blocked = await ask();
      expect(blocked.finishes).toEqual(['content_filter', 'content_filter']);
      expect(blocked.texts.join(' ')).not.toContain('fal');
    } finally {
      answer = { text: 'fine' };
    }
  });
});
