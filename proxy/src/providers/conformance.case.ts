import { describe, expect, it } from 'vitest';
import type { ChatRequest, ProviderAdapter } from './adapter.js';
import { Cancel } from './cancel.js';

/**
 * What every provider adapter must do, whatever its wire protocol: each adapter's test file calls
 * runAdapterConformance with a way to build it against something that speaks its protocol.
 */
export interface ConformanceTarget {
  adapter: () => ProviderAdapter;
  model: string;
}

function request(model: string, body: Record<string, unknown>): ChatRequest {
  const full: Record<string, unknown> = { model, messages: [{ role: 'user', content: 'Tell me something' }], ...body };
  return {
    body: full,
    raw: Buffer.from(JSON.stringify(full)),
    model,
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

export function runAdapterConformance(name: string, target: () => ConformanceTarget): void {
  describe(`${name} adapter conformance`, () => {
    it('answers a completion in OpenAI format with usage and a finish reason', async () => {
      const { adapter, model } = target();
      const result = await adapter().complete(request(model, {}), new Cancel());
      const body = JSON.parse(result.body.toString('utf8')) as { object: string; choices: { message: { role: string } }[] };
      expect(body.object).toBe('chat.completion');
      expect(body.choices[0]?.message.role).toBe('assistant');
      expect(result.usage.input).toBeGreaterThan(0);
      expect(result.usage.output).toBeGreaterThan(0);
      expect(result.finishReason).toBe('stop');
    });

    it('streams chunks, filling usage and finish reason, without the usage chunk nobody asked for', async () => {
      const { adapter, model } = target();
      const { meta, events } = await adapter().stream(request(model, { stream: true }), new Cancel());
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
      const { events } = await adapter().stream(request(model, { stream: true, stream_options: { include_usage: true } }), new Cancel());
      const chunks = await collect(events);
      const last = chunks.at(-1) as { choices: unknown[]; usage?: { total_tokens: number } };
      expect(last.choices).toEqual([]);
      expect(last.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('stops streaming when the call is cancelled', async () => {
      const { adapter, model } = target();
      const controller = new Cancel();
      const { events } = await adapter().stream(request(model, { stream: true }), controller);
      const iterator = events[Symbol.asyncIterator]();
      await iterator.next();
      controller.abort();
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
  });
}
