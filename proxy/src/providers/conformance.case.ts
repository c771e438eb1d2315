import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionBody, ChatRequest, ProviderAdapter } from './adapter.js';
import { Cancel } from './cancel.js';

/**
 * What every provider adapter must do, whatever its wire protocol. Each adapter's test file calls
 * runAdapterConformance with a way to build it; adapters that reach a network also bring a mock
 * upstream speaking their provider's documented wire format, steered by the upstream model name
 * (every wire format carries it) so that the same scenarios run against each of them:
 *
 *   conf-text          a text answer "Hello there", finish "stop"-like, usage input 11 / output 2
 *                      (and 3 cached prompt tokens where the wire format reports them)
 *   conf-tools         a call of tool `get_weather` with arguments {"city":"Paris"}; streamed, the
 *                      arguments arrive in at least two pieces
 *   conf-length        a text answer cut by the token limit
 *   conf-400           the provider's own 400 error body, message "bad request from provider"
 *   conf-429           429 with `retry-after: 7`
 *   conf-500           500 (the provider's error body)
 *   conf-slow          headers only after 2 s (the adapter is built with timeout_ms 300)
 *   conf-stream-error  a stream: one text piece, then the provider's in-stream error event
 *   conf-hang          a stream: one text piece, then silence until the client goes away
 *
 * The mock records the last request (path, headers, JSON body) and counts aborted requests.
 */
export const SCENARIOS = {
  text: 'conf-text',
  tools: 'conf-tools',
  length: 'conf-length',
  status400: 'conf-400',
  status429: 'conf-429',
  status500: 'conf-500',
  slow: 'conf-slow',
  streamError: 'conf-stream-error',
  hang: 'conf-hang',
} as const;

export const TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
} as const;

export interface WireMock {
  baseUrl: string;
  lastRequest(): { path: string; headers: Record<string, string>; body: unknown; raw?: Buffer } | null;
  aborted(): number;
}

export interface WireTarget {
  /** The adapter, built against the mock with `timeout_ms: 300` and the provider key `PROVIDER_KEY`. */
  adapter: () => ProviderAdapter;
  mock: WireMock;
  /** Whether the wire format reports cached prompt tokens. */
  reportsCached: boolean;
  /** Where the provider key must appear: a header name (lower case). */
  keyHeader: string;
  /**
   * The credential that must appear there, when it is not PROVIDER_KEY itself (an access token
   * the adapter got from the provider's token endpoint).
   */
  credential?: () => string;
}

export const PROVIDER_KEY = 'provider-secret-key-0123456789';

export interface ConformanceTarget {
  adapter: () => ProviderAdapter;
  model: string;
  /** Present for adapters that speak to a provider over the network. */
  wire?: () => WireTarget;
}

export function chatRequest(model: string, body: Record<string, unknown>, upstreamModel = model): ChatRequest {
  const full = { model, messages: [{ role: 'user', content: 'Tell me something' }], ...body } as ChatCompletionBody;
  return {
    body: full,
    raw: Buffer.from(JSON.stringify(full)),
    model,
    upstreamModel,
    stream: full.stream === true,
    clientWantsUsage: (full.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
    requestId: 'conformance-1',
  };
}

async function collect(events: AsyncIterable<string>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const data of events) out.push(JSON.parse(data) as Record<string, unknown>);
  return out;
}

type Chunk = { choices: { delta: { role?: string; content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason: string | null }[]; usage?: unknown };

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected the call to fail');
}

export function runAdapterConformance(name: string, target: () => ConformanceTarget): void {
  describe(`${name} adapter conformance`, () => {
    it('answers a completion in OpenAI format with usage and a finish reason', async () => {
      const { adapter, model } = target();
      const result = await adapter().complete(chatRequest(model, {}), new Cancel());
      const body = JSON.parse(result.body.toString('utf8')) as { object: string; choices: { message: { role: string } }[] };
      expect(body.object).toBe('chat.completion');
      expect(body.choices[0]?.message.role).toBe('assistant');
      expect(result.usage.input).toBeGreaterThan(0);
      expect(result.usage.output).toBeGreaterThan(0);
      expect(result.finishReason).toBe('stop');
    });

    it('streams chunks, filling usage and finish reason, without the usage chunk nobody asked for', async () => {
      const { adapter, model } = target();
      const { meta, events } = await adapter().stream(chatRequest(model, { stream: true }), new Cancel());
      const chunks = await collect(events);
      expect(chunks.length).toBeGreaterThan(1);
      for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
      expect(chunks.every((c) => Array.isArray(c.choices) && (c.choices as unknown[]).length > 0)).toBe(true);
      expect(meta.finishReason).toBe('stop');
      expect(meta.usage?.input).toBeGreaterThan(0);
      expect(meta.usage?.output).toBeGreaterThan(0);
      expect(meta.estimatedOutput).toBeGreaterThan(0);
    });

    it('passes the usage chunk when the client asked for it', async () => {
      const { adapter, model } = target();
      const { events } = await adapter().stream(chatRequest(model, { stream: true, stream_options: { include_usage: true } }), new Cancel());
      const chunks = await collect(events);
      const last = chunks.at(-1) as { choices: unknown[]; usage?: { total_tokens: number } };
      expect(last.choices).toEqual([]);
      expect(last.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('stops streaming when the call is cancelled', async () => {
      const { adapter, model } = target();
      const cancel = new Cancel();
      const { events } = await adapter().stream(chatRequest(model, { stream: true }), cancel);
      const iterator = events[Symbol.asyncIterator]();
      await iterator.next();
      cancel.abort();
      let ended = false;
      try {
        for (let i = 0; i < 1000; i++) {
          const step = await iterator.next();
          if (step.done) {
            ended = true;
            break;
          }
        }
      } catch {
        ended = true;
      }
      expect(ended).toBe(true);
    });

    describe('on the wire', () => {
      const wired = () => {
        const t = target();
        if (t.wire === undefined) return null;
        return { ...t.wire(), model: 'gw-model' };
      };
      const maybe = (title: string, fn: (w: WireTarget & { model: string }) => Promise<void>) =>
        it(title, async (ctx) => {
          const w = wired();
          if (w === null) return ctx.skip();
          await fn(w);
        });

      maybe('sends the upstream model name and the provider key, never the client key', async (w) => {
        await w.adapter().complete(chatRequest(w.model, {}, SCENARIOS.text), new Cancel());
        const seen = w.mock.lastRequest();
        expect(JSON.stringify(seen)).toContain(SCENARIOS.text);
        expect(JSON.stringify(seen)).not.toContain('gw-model');
        expect(Object.entries(seen?.headers ?? {}).some(([k, v]) => k === w.keyHeader && v.includes(w.credential?.() ?? PROVIDER_KEY))).toBe(true);
      });

      maybe('forwards a traced request\'s trace context beside the credential, and only that request\'s', async (w) => {
        const adapter = w.adapter();
        const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
        const credential = () => w.credential?.() ?? PROVIDER_KEY;
        await adapter.complete({ ...chatRequest(w.model, {}, SCENARIOS.text), traceHeaders: { traceparent } }, new Cancel());
        const traced = w.mock.lastRequest()?.headers ?? {};
        expect(traced.traceparent).toBe(traceparent);
        expect(traced[w.keyHeader]).toContain(credential());
        await adapter.complete(chatRequest(w.model, {}, SCENARIOS.text), new Cancel());
        const untraced = w.mock.lastRequest()?.headers ?? {};
        expect(untraced.traceparent).toBeUndefined();
        expect(untraced[w.keyHeader]).toContain(credential());
      });

      maybe('translates a text answer, its usage and its finish reason', async (w) => {
        const result = await w.adapter().complete(chatRequest(w.model, { max_tokens: 50 }, SCENARIOS.text), new Cancel());
        const body = JSON.parse(result.body.toString('utf8')) as { object: string; model: string; choices: { message: { role: string; content: string }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } } };
        expect(body.object).toBe('chat.completion');
        expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' });
        expect(body.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
        expect(result.usage).toMatchObject({ input: 11, output: 2 });
        expect(result.finishReason).toBe('stop');
        if (w.reportsCached) {
          expect(result.usage.cached).toBe(3);
          expect(body.usage.prompt_tokens_details?.cached_tokens).toBe(3);
        }
      });

      maybe('translates a tool call, whole', async (w) => {
        const result = await w.adapter().complete(chatRequest(w.model, { tools: [TOOL], tool_choice: 'auto' }, SCENARIOS.tools), new Cancel());
        const body = JSON.parse(result.body.toString('utf8')) as { choices: { message: { tool_calls: { id: string; type: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[] };
        const call = body.choices[0]?.message.tool_calls[0];
        expect(call?.type).toBe('function');
        expect(call?.id).toBeTruthy();
        expect(call?.function.name).toBe('get_weather');
        expect(JSON.parse(call?.function.arguments ?? '')).toEqual({ city: 'Paris' });
        expect(body.choices[0]?.finish_reason).toBe('tool_calls');
        expect(result.finishReason).toBe('tool_calls');
      });

      maybe('maps a cut answer to length / max_tokens', async (w) => {
        const result = await w.adapter().complete(chatRequest(w.model, { max_tokens: 2 }, SCENARIOS.length), new Cancel());
        const body = JSON.parse(result.body.toString('utf8')) as { choices: { finish_reason: string }[] };
        expect(body.choices[0]?.finish_reason).toBe('length');
        expect(result.finishReason).toBe('max_tokens');
      });

      maybe('streams text as OpenAI chunks: role first, one finish, usage counted', async (w) => {
        const { meta, events } = await w.adapter().stream(chatRequest(w.model, { stream: true }, SCENARIOS.text), new Cancel());
        const chunks = (await collect(events)) as Chunk[];
        expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
        expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there');
        expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0]?.finish_reason)).toEqual(['stop']);
        expect(chunks.some((c) => c.usage)).toBe(false);
        expect(meta.usage).toMatchObject({ input: 11, output: 2 });
        expect(meta.finishReason).toBe('stop');
      });

      maybe('streams the usage chunk last when asked', async (w) => {
        const { events } = await w.adapter().stream(chatRequest(w.model, { stream: true, stream_options: { include_usage: true } }, SCENARIOS.text), new Cancel());
        const chunks = await collect(events);
        expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } });
      });

      maybe('streams a tool call as indexed deltas: id and name first, then the arguments', async (w) => {
        const { meta, events } = await w.adapter().stream(chatRequest(w.model, { stream: true, tools: [TOOL] }, SCENARIOS.tools), new Cancel());
        const chunks = (await collect(events)) as Chunk[];
        const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
        expect(deltas.length).toBeGreaterThanOrEqual(2);
        expect(deltas.every((d) => d.index === 0)).toBe(true);
        expect(deltas[0]?.id).toBeTruthy();
        expect(deltas[0]?.function?.name).toBe('get_weather');
        expect(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''))).toEqual({ city: 'Paris' });
        expect(meta.finishReason).toBe('tool_calls');
      });

      maybe("maps the provider's 400 to INVALID_REQUEST with its message, not retryable", async (w) => {
        const err = await failure(w.adapter().complete(chatRequest(w.model, {}, SCENARIOS.status400), new Cancel()));
        expect(err.code).toBe('INVALID_REQUEST');
        expect(err.message).toContain('bad request from provider');
        expect(err.retryable).toBe(false);
      });

      maybe("maps the provider's 429 to RATE_LIMITED with its Retry-After, retryable", async (w) => {
        const err = await failure(w.adapter().complete(chatRequest(w.model, {}, SCENARIOS.status429), new Cancel()));
        expect(err.code).toBe('RATE_LIMITED');
        expect(err.retryAfter).toBe(7);
        expect(err.retryable).toBe(true);
      });

      maybe("maps the provider's 500 to UPSTREAM_ERROR, retryable, streams too", async (w) => {
        const err = await failure(w.adapter().complete(chatRequest(w.model, {}, SCENARIOS.status500), new Cancel()));
        expect(err.code).toBe('UPSTREAM_ERROR');
        expect(err.retryable).toBe(true);
        const streamed = await failure(w.adapter().stream(chatRequest(w.model, { stream: true }, SCENARIOS.status500), new Cancel()));
        expect(streamed.code).toBe('UPSTREAM_ERROR');
      });

      maybe('maps a provider that does not answer in time to UPSTREAM_TIMEOUT, retryable', async (w) => {
        const err = await failure(w.adapter().complete(chatRequest(w.model, {}, SCENARIOS.slow), new Cancel()));
        expect(err.code).toBe('UPSTREAM_TIMEOUT');
        expect(err.retryable).toBe(true);
      });

      maybe("ends a stream with UPSTREAM_ERROR on the provider's in-stream error event", async (w) => {
        const { events } = await w.adapter().stream(chatRequest(w.model, { stream: true }, SCENARIOS.streamError), new Cancel());
        const seen: string[] = [];
        const err = await failure(
          (async () => {
            for await (const data of events) seen.push(data);
          })(),
        );
        expect(err.code).toBe('UPSTREAM_ERROR');
        expect(seen.length).toBeGreaterThan(0);
      });

      maybe('aborts the provider request when the call is cancelled mid-stream', async (w) => {
        const before = w.mock.aborted();
        const cancel = new Cancel();
        const { events } = await w.adapter().stream(chatRequest(w.model, { stream: true }, SCENARIOS.hang), cancel);
        const iterator = events[Symbol.asyncIterator]();
        await iterator.next();
        cancel.abort();
        await iterator.next().catch(() => undefined);
        await expect.poll(() => w.mock.aborted()).toBeGreaterThan(before);
      });
    });
  });
}
