import type { ServerResponse } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { sendJson, sendSse, startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { answerChat } from './chat-wire-answer.js';
import { answerAnthropic, signThinking } from './anthropic-thinking-answer.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Stateful Responses with the official `openai` SDK: on a translated provider (Chat Completions
 * upstream) the gateway keeps each response with its conversation in PostgreSQL, through the
 * control plane — `previous_response_id` continues it, GET and DELETE /v1/responses/{id} and
 * input_items serve it, another project's key finds nothing, `store: false` keeps nothing; on a
 * native provider (`responses: native`) the provider keeps its own and the fields go to it as sent.
 */
const TOKEN = 'responses-stored-internal-token-0123456789';
let cp: ControlPlaneHarness;
let chat: RunningWireMock;
let native: RunningWireMock;
let h: Harness;
let key: TestKey;
let other: TestKey;
let client: OpenAI;
const chatSeen: WireRequest[] = [];

/** The chat mock repeats what it was told: the texts of every message, so a test sees the conversation the provider got. */
function chatAnswer(req: WireRequest, res: ServerResponse): void {
  chatSeen.push(req);
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  answerChat(req, res, { text: `I saw ${messages.length} messages; the last said ${JSON.stringify(messages.at(-1)?.content)}` }, { prompt_tokens: 20, completion_tokens: 5 });
}

function nativeAnswer(req: WireRequest, res: ServerResponse): void {
  const item = { id: 'msg_n', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `previous: ${String(req.body.previous_response_id ?? 'none')}`, annotations: [] }] };
  sendJson(res, 200, { id: `resp_native${String(req.body.previous_response_id ?? '').length}`, object: 'response', created_at: 1, status: 'completed', model: req.body.model, output: [item], store: req.body.store ?? true, usage: { input_tokens: 9, output_tokens: 3, total_tokens: 12 } });
}

/** A native provider of a pair behind one weighted route: its ids name it, and it knows only its own. */
function pairAnswer(name: string): (req: WireRequest, res: ServerResponse) => void {
  let made = 0;
  const own = new Set<string>();
  return (req, res) => {
    const previous = req.body.previous_response_id;
    if (typeof previous === 'string' && !own.has(previous)) return sendJson(res, 400, { error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
    const id = `resp_${name}${made++}`;
    own.add(id);
    const response = { id, object: 'response', created_at: 1, status: 'completed', model: req.body.model, output: [{ id: `msg_${name}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: name, annotations: [] }] }], usage: { input_tokens: 4, output_tokens: 1, total_tokens: 5 } };
    if (req.body.stream !== true) return sendJson(res, 200, response);
    sendSse(res, [
      `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [], usage: null } })}\n\n`,
      `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 1, response })}\n\n`,
    ]);
  };
}
let left: RunningWireMock;
let right: RunningWireMock;

/**
 * OpenAI's Responses API keeping what it made: create, retrieve (whole or streamed), input_items
 * and delete, each answered as OpenAI documents, an unknown id 404. Every request is recorded.
 */
const keptSeen: WireRequest[] = [];
function keptAnswer(): (req: WireRequest, res: ServerResponse) => void {
  let made = 0;
  const kept = new Map<string, { response: Record<string, unknown>; items: Record<string, unknown>[] }>();
  const missing = (res: ServerResponse, id: string) => sendJson(res, 404, { error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null } });
  return (req, res) => {
    keptSeen.push(req);
    const url = new URL(req.path, 'http://mock');
    const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(url.pathname);
    if (req.method === 'POST') {
      const id = `resp_kept${made++}`;
      const input = typeof req.body.input === 'string' ? [{ role: 'user', content: req.body.input }] : ((req.body.input ?? []) as Record<string, unknown>[]);
      // Its own input items only, as OpenAI lists them; a search is answered with a built-in tool's call.
      const items = input.map((item, i) => ({ id: `msg_in${id}${i}`, type: 'message', ...item }));
      const said = { id: `msg_out${id}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `kept upstream (${made})`, annotations: [] }] };
      const output = JSON.stringify(req.body.input).includes('search') ? [{ id: `ws_${id}`, type: 'web_search_call', status: 'completed' }, said] : [said];
      const response = { id, object: 'response', created_at: 1, status: 'completed', background: req.body.background ?? false, previous_response_id: req.body.previous_response_id ?? null, model: req.body.model, output, usage: { input_tokens: 6, output_tokens: 2, total_tokens: 8 }, upstream_only: 'a field of tomorrow' };
      kept.set(id, { response, items });
      return sendJson(res, 200, response);
    }
    const id = decodeURIComponent(match?.[1] ?? '');
    const found = kept.get(id);
    if (found === undefined) return missing(res, id);
    if (req.method === 'DELETE') {
      kept.delete(id);
      return sendJson(res, 200, { id, object: 'response.deleted', deleted: true });
    }
    if (match?.[2] !== undefined) {
      const items = url.searchParams.get('order') === 'asc' ? found.items : [...found.items].reverse();
      const page = items.slice(0, Number(url.searchParams.get('limit') ?? 20));
      return sendJson(res, 200, { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: page.length < items.length });
    }
    if (url.searchParams.get('stream') === 'true') {
      return sendSse(res, [
        `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...found.response, status: 'in_progress', output: [] } })}\n\n`,
        `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 1, response: found.response })}\n\n`,
      ]);
    }
    sendJson(res, 200, found.response);
  };
}
let keeping: RunningWireMock;

/** Claude with extended thinking: a signed thought, then the weather tool called, or the answer from its result. */
const claudeSeen: WireRequest[] = [];
function claudeAnswer(req: WireRequest, res: ServerResponse): void {
  claudeSeen.push(req);
  const last = ((req.body.messages ?? []) as { content: unknown }[]).at(-1)?.content;
  const result = Array.isArray(last) ? (last as { type: string; content?: unknown }[]).find((b) => b.type === 'tool_result') : undefined;
  if (result === undefined) return answerAnthropic(req, res, { call: { id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } } }, 'Look up the weather in Paris.', { input_tokens: 30, output_tokens: 8 });
  answerAnthropic(req, res, { text: `It is ${String(result.content)}.` }, 'Report it.', { input_tokens: 40, output_tokens: 6 });
}
let claude: RunningWireMock;

/** A providers-file entry serving `model` with the Responses API upstream, at `mock`. */
function nativeEntry(name: string, mock: RunningWireMock, model: string): string {
  return `  - name: ${name}\n    type: openai\n    responses: native\n    base_url: ${mock.baseUrl}/v1\n    api_key: sk-${name}-provider-secret-0123456789\n    models: [${model}]\n`;
}

beforeAll(async () => {
  left = await startWireMock(pairAnswer('left'));
  right = await startWireMock(pairAnswer('right'));
  keeping = await startWireMock(keptAnswer());
  cp = await startControlPlane('responses-stored', { env: { INTERNAL_TOKEN: TOKEN } });
  chat = await startWireMock(chatAnswer);
  native = await startWireMock(nativeAnswer);
  claude = await startWireMock(claudeAnswer);
  h = await startHarness(
    'responses-stored',
    `providers:
  - name: chat
    type: openai
    base_url: ${chat.baseUrl}/v1
    api_key: sk-chat-provider-secret-0123456789
    models: [chat-1]
  - name: claude
    type: anthropic
    base_url: ${claude.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: [claude-1]
${nativeEntry('upstream-responses', native, 'native-1')}${nativeEntry('left', left, 'pair-1')}${nativeEntry('right', right, 'pair-1')}${nativeEntry('keeping', keeping, 'kept-1')}routes:
  pair-1: { strategy: weighted, weights: { left: 1, right: 1 } }
`,
    { CONTROL_PLANE_URL: cp.base, INTERNAL_TOKEN: TOKEN },
  );
  const project = await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'stateful' } });
  const second = await cp.api<{ id: string }>('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'another' } });
  key = await projectTestKey(h.redis, h.keys, { projectId: project.body.id });
  other = await projectTestKey(h.redis, h.keys, { projectId: second.body.id });
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await h?.stop();
  await chat?.close();
  await native?.close();
  await left?.close();
  await right?.close();
  await keeping?.close();
  await claude?.close();
  await cp?.close();
});

describe('stateful Responses on a translated provider', () => {
  it('keeps a response by default and continues it with previous_response_id', async () => {
    const first = await client.responses.create({ model: 'chat-1', instructions: 'Be brief.', input: 'My name is Ada.' });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    const second = await client.responses.create({ model: 'chat-1', previous_response_id: first.id, input: 'What is my name?' });
    expect(second.previous_response_id).toBe(first.id);
    const sent = chatSeen.at(-1)!.body.messages as { role: string; content: unknown }[];
    // Its own instructions are not carried over; the earlier turn and its answer are.
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[0]?.content).toBe('My name is Ada.');
    expect(JSON.stringify(sent[1]?.content)).toContain('I saw 2 messages');
    const third = await client.responses.create({ model: 'chat-1', previous_response_id: second.id, input: [{ role: 'user', content: 'And again?' }], stream: true });
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of third) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.previous_response_id).toBe(second.id);
    expect((chatSeen.at(-1)!.body.messages as unknown[]).length).toBe(5);
    // The streamed one was kept before its last event: a follow-up finds it at once.
    const fourth = await client.responses.create({ model: 'chat-1', previous_response_id: completed!.id, input: 'Last one.' });
    expect(fourth.output_text).toContain('I saw 7 messages');
  });

  it("continues a tool loop on Claude with thinking on, from the signed thought the gateway kept with the response", async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'claude-1', input: 'Weather in Paris?', tools, reasoning: { effort: 'low', summary: 'auto' } });
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Look up the weather in Paris.' }]);
    expect(typeof reasoning.encrypted_content).toBe('string');
    expect(claudeSeen.at(-1)!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;

    const second = await client.responses.create({ model: 'claude-1', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }], tools, reasoning: { effort: 'low' } });
    expect(second.output_text).toBe('It is sunny.');
    const sent = claudeSeen.at(-1)!.body;
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const assistant = (sent.messages as { role: string; content: { type: string }[] }[])[1];
    expect(assistant?.role).toBe('assistant');
    expect(assistant?.content[0]).toEqual({ type: 'thinking', thinking: 'Look up the weather in Paris.', signature: signThinking('Look up the weather in Paris.') });
    // Asked for no summary, the answer's reasoning is there to send back, with nothing shown.
    expect((second.output[0] as OpenAI.Responses.ResponseReasoningItem).summary).toEqual([]);
  });

  it('serves GET, input_items and DELETE, and another project finds nothing', async () => {
    const made = await client.responses.create({ model: 'chat-1', input: [{ role: 'user', content: 'Remember this.' }, { role: 'user', content: 'And this.' }] });
    const got = await client.responses.retrieve(made.id);
    expect(got).toMatchObject({ id: made.id, object: 'response', status: 'completed', output: made.output });
    const items = await client.responses.inputItems.list(made.id, { order: 'asc' });
    expect(items.data.map((i) => (i as { content: unknown }).content)).toEqual(['Remember this.', 'And this.']);
    expect(items.data.every((i) => typeof i.id === 'string')).toBe(true);

    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    await expect(stranger.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.responses.delete(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.responses.create({ model: 'chat-1', previous_response_id: made.id, input: 'hi' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);

    await client.responses.delete(made.id);
    await expect(client.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.create({ model: 'chat-1', previous_response_id: made.id, input: 'hi' })).rejects.toThrow(/not found/);
  });

  it('answers an id that is not valid percent-encoding 404, and keeps serving', async () => {
    const res = await fetch(`${h.url}/v1/responses/resp_%E0%A4%A`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await client.responses.create({ model: 'chat-1', input: 'still here', store: false })).status).toBe('completed');
  });

  it('keeps nothing with store: false', async () => {
    const made = await client.responses.create({ model: 'chat-1', input: 'Forget me.', store: false });
    expect((made as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const rows = await cp.sql`select count(*)::int as n from stored_responses where id = ${made.id}`;
    expect(rows[0]?.n).toBe(0);
  });

  it('puts the kept item in the place of an item_reference, input and output items alike', async () => {
    const first = await client.responses.create({ model: 'chat-1', input: 'My name is Ada.' });
    const [said] = (await client.responses.inputItems.list(first.id)).data;
    const answer = first.output[0]!.id!;
    const input = [{ type: 'item_reference', id: said!.id }, { type: 'item_reference', id: answer }, { role: 'user', content: 'What is my name?' }] as OpenAI.Responses.ResponseInput;
    const second = await client.responses.create({ model: 'chat-1', input, store: false });
    expect(second.output_text).toContain('I saw 3 messages');
    const sent = chatSeen.at(-1)!.body.messages as { role: string; content: unknown }[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[0]!.content)).toContain('My name is Ada.');
    expect(JSON.stringify(sent[1]!.content)).toContain('I saw 1 messages');

    const missing = await client.responses.create({ model: 'chat-1', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_neverKept' }] as OpenAI.Responses.ResponseInput }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    expect((missing as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[1]');
    expect((missing as Error).message).toContain("Item with id 'msg_neverKept' not found.");
    // Another project's items are not found either.
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    await expect(stranger.responses.create({ model: 'chat-1', input: [{ type: 'item_reference', id: answer }] as OpenAI.Responses.ResponseInput })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('continues a Vercel AI SDK conversation at its default settings (item references to kept output)', async () => {
    const bodies: string[] = [];
    const watching: typeof fetch = (url, init) => {
      bodies.push(String(init?.body ?? ''));
      return fetch(url, init);
    };
    const ai = createOpenAI({ baseURL: `${h.url}/v1`, apiKey: key.key, fetch: watching });
    const first = await generateText({ model: ai('chat-1'), prompt: 'First turn' });
    const messages = [{ role: 'user' as const, content: 'First turn' }, ...first.response.messages, { role: 'user' as const, content: 'Second turn' }];
    const second = await generateText({ model: ai('chat-1'), messages, maxRetries: 0 });
    expect(bodies.at(-1)).toContain('"item_reference"');
    expect(second.text).toContain('I saw 3 messages');
    const sent = chatSeen.at(-1)!.body.messages as { role: string; content: unknown }[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[1]!.content)).toContain('I saw 1 messages');
  });

  it('keeps responses in PostgreSQL under the key\'s project, expiring after the project\'s ttl', async () => {
    const made = await client.responses.create({ model: 'chat-1', input: 'Kept.' });
    const rows = await cp.sql`select project_id::text as project_id, provider, extract(epoch from expires_at - created_at)::int as ttl from stored_responses where id = ${made.id}`;
    expect(rows[0]).toMatchObject({ project_id: key.projectId, provider: null });
    expect(Math.round(Number(rows[0]?.ttl) / 86_400)).toBe(30);
  });
});

async function streamed(previous: string): Promise<OpenAI.Responses.Response> {
  const stream = client.responses.stream({ model: 'pair-1', input: 'again', previous_response_id: previous });
  return stream.finalResponse();
}

describe('stateful Responses on a native provider', () => {
  it('sends store and previous_response_id to the provider as they came', async () => {
    const first = await client.responses.create({ model: 'native-1', input: 'hello' });
    const second = await client.responses.create({ model: 'native-1', input: 'again', previous_response_id: first.id });
    expect(second.output_text).toBe(`previous: ${first.id}`);
    expect(native.lastRequest()?.body).toMatchObject({ previous_response_id: first.id, input: 'again' });
  });

  it('continues a native response at the provider that made it, on a weighted route over two', async () => {
    const served = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const first = await client.responses.create({ model: 'pair-1', input: `turn ${i}` });
      const where = first.output_text;
      served.add(where);
      // Streamed every other time: the id is remembered before the stream's last event too.
      const second = i % 2 === 0 ? await client.responses.create({ model: 'pair-1', input: 'again', previous_response_id: first.id }) : await streamed(first.id);
      expect(second.output_text, `turn ${i}`).toBe(where);
    }
    // Both providers drew first turns: without the memory, about half the follow-ups would have gone astray.
    expect(served).toEqual(new Set(['left', 'right']));
    const rows = await cp.sql<{ provider: string }[]>`select distinct provider from stored_responses where model = 'pair-1' and response is null`;
    expect(new Set(rows.map((r) => r.provider))).toEqual(new Set(['left', 'right']));
  });

  it('refuses to continue on a native route a response the gateway kept for a translated one', async () => {
    const kept = await client.responses.create({ model: 'chat-1', input: 'kept here' });
    const refused = await client.responses.create({ model: 'pair-1', input: 'go on', previous_response_id: kept.id }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
  });

  it('sends item references to the provider as they came', async () => {
    const input = [{ type: 'item_reference', id: 'msg_keptUpstream' }, { role: 'user', content: 'go on' }] as OpenAI.Responses.ResponseInput;
    await client.responses.create({ model: 'native-1', input });
    expect((native.lastRequest()?.body as { input?: unknown } | undefined)?.input).toEqual(input);
  });
});

/** Polls until the gateway remembers where a native response lives (written beside the answer, not before it). */
async function remembered(id: string): Promise<void> {
  for (;;) {
    const rows = await cp.sql`select provider from stored_responses where id = ${id}`;
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a response its native provider keeps, through the gateway', () => {
  it('retrieves it, whole and streamed, and lists its input items, from the provider that made it', async () => {
    // A background response is remembered before its answer: the client polls it at once.
    const made = await client.responses.create({ model: 'kept-1', input: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }], background: true });
    const beta = { headers: { 'openai-beta': 'responses=v9' } };
    const got = await client.responses.retrieve(made.id, {}, beta);
    expect(got).toMatchObject({ id: made.id, object: 'response', upstream_only: 'a field of tomorrow' });
    expect(got.output_text).toMatch(/^kept upstream/);
    const asked = keptSeen.at(-1)!;
    expect(asked).toMatchObject({ method: 'GET', path: `/v1/responses/${made.id}` });
    // The provider's own credential, and the client's provider headers; never the client's key.
    expect(asked.headers.authorization).toBe('Bearer sk-keeping-provider-secret-0123456789');
    expect(asked.headers['openai-beta']).toBe('responses=v9');

    const page = await client.responses.inputItems.list(made.id, { order: 'asc', limit: 1 });
    expect(page.data.map((i) => (i as { content: unknown }).content)).toEqual(['one']);
    expect(page.has_more).toBe(true);
    expect(keptSeen.at(-1)!.path).toBe(`/v1/responses/${made.id}/input_items?order=asc&limit=1`);

    const events: string[] = [];
    for await (const event of await client.responses.retrieve(made.id, { stream: true })) events.push(event.type);
    expect(events).toEqual(['response.created', 'response.completed']);
  });

  it('deletes it at the provider and forgets it; another project finds nothing, and the provider is not asked', async () => {
    const made = await client.responses.create({ model: 'kept-1', input: 'forget me' });
    await remembered(made.id);
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const before = keptSeen.length;
    await expect(stranger.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.responses.delete(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(keptSeen.length).toBe(before);

    await client.responses.delete(made.id);
    expect(keptSeen.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/responses/${made.id}` });
    const rows = await cp.sql`select count(*)::int as n from stored_responses where id = ${made.id}`;
    expect(rows[0]?.n).toBe(0);
    await expect(client.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(keptSeen.at(-1)!.method).toBe('DELETE');
  });

  it("answers the provider's 404 as its own, and forgets the id", async () => {
    const made = await client.responses.create({ model: 'kept-1', input: 'soon gone upstream' });
    await remembered(made.id);
    // Gone at the provider (expired there): the gateway says 404 and forgets it.
    await fetch(`${keeping.baseUrl}/v1/responses/${made.id}`, { method: 'DELETE' });
    await expect(client.responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const rows = await cp.sql`select count(*)::int as n from stored_responses where id = ${made.id}`;
    expect(rows[0]?.n).toBe(0);
  });

  it('continues a native conversation on a translated model, read back from its provider, then keeps it', async () => {
    const first = await client.responses.create({ model: 'kept-1', input: 'My name is Ada.' });
    const second = await client.responses.create({ model: 'kept-1', input: 'I write programs.', previous_response_id: first.id });
    await remembered(second.id);
    const third = await client.responses.create({ model: 'chat-1', instructions: 'Be brief.', input: 'What is my name?', previous_response_id: second.id });
    expect(third.previous_response_id).toBe(second.id);
    const sent = chatSeen.at(-1)!.body.messages as { role: string; content: unknown }[];
    // The whole chain, oldest first, each turn once: the provider lists only a response's own input items.
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(sent.map((m) => m.content))).toContain('My name is Ada.');
    expect(JSON.stringify(sent[4]!.content)).toContain('kept upstream');
    // From here the gateway keeps the conversation: a follow-up needs no provider read.
    const before = keptSeen.length;
    const fourth = await client.responses.create({ model: 'chat-1', input: 'And again?', previous_response_id: third.id });
    expect(fourth.output_text).toContain('I saw 7 messages');
    expect(keptSeen.length).toBe(before);
  });

  it('refuses, naming previous_response_id, a native conversation the translation cannot carry', async () => {
    const searched = await client.responses.create({ model: 'kept-1', input: 'search the web' });
    await remembered(searched.id);
    const calls = chatSeen.length;
    const refused = await client.responses.create({ model: 'chat-1', input: 'go on', previous_response_id: searched.id }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    expect((refused as Error).message).toContain('kept by the provider keeping');
    expect((refused as Error).message).toContain('web_search_call');
    expect(chatSeen.length).toBe(calls);
  });
});
