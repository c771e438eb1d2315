import { Client, type Dispatcher } from 'undici';
import type { Target } from './stack.js';

/**
 * Requests the scenarios send, and the clients that time them. A body is a realistic small chat
 * request; the `mock` field steers the mock provider and is passed through untouched by both the
 * bare pass-through and the gateway (unknown fields are forwarded).
 */
export const CHAT_PATH = '/v1/chat/completions';

export interface MockSteering {
  chunks?: number;
  gap_ms?: number;
  hang_after_chunks?: number;
}

export function chatBody(model: string, options: { stream?: boolean; mock?: MockSteering } = {}): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'Write one sentence about measuring proxies.' },
    ],
    temperature: 0.7,
    max_tokens: 64,
    ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    ...(options.mock ? { mock: options.mock } : {}),
  });
}

export function chatHeaders(target: Pick<Target, 'key'>, userAgent: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-api-key': target.key, 'user-agent': userAgent };
}

export interface SequentialResult {
  /** Microseconds from just before the request was written to the last byte of the response. */
  samplesUs: Float64Array;
  errors: number;
}

/**
 * Sequential requests over one keep-alive connection: at concurrency 1 nothing queues, so the
 * time is the target's own service time plus the loopback round trip, the same for every target.
 */
export async function timeSequential(client: Client, target: Target, body: string, userAgent: string, count: number): Promise<SequentialResult> {
  const samples = new Float64Array(count);
  const headers = chatHeaders(target, userAgent);
  let errors = 0;
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    try {
      const res = await client.request({ path: CHAT_PATH, method: 'POST', headers, body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) errors++;
    } catch {
      errors++;
    }
    samples[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  return { samplesUs: samples, errors };
}

export function keepAliveClient(origin: string): Client {
  return new Client(origin, { pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
}

export interface StreamEvent {
  data: string;
  /** Nanoseconds since the request began, taken when the bytes ending the event arrived. */
  atNs: bigint;
}

export interface StreamOutcome {
  status: number;
  /** Headers arrived (ns since start). */
  headersNs: bigint;
  events: StreamEvent[];
  /** The stream ended (ns since start). */
  endNs: bigint;
  error: string | null;
}

/**
 * One streamed chat request, every SSE `data:` event timestamped on arrival. `onEvent` sees each
 * event at once (to react to the first chunk, or to an error event, without waiting for the end).
 */
export async function timedStream(
  dispatcher: Dispatcher,
  target: Target,
  body: string,
  userAgent: string,
  onEvent?: (event: StreamEvent) => void,
  signal?: AbortSignal,
): Promise<StreamOutcome> {
  const t0 = process.hrtime.bigint();
  const events: StreamEvent[] = [];
  let status = 0;
  let headersNs = 0n;
  try {
    const res = await dispatcher.request({ path: CHAT_PATH, method: 'POST', headers: chatHeaders(target, userAgent), body, signal });
    status = res.statusCode;
    headersNs = process.hrtime.bigint() - t0;
    let pending = '';
    for await (const chunk of res.body) {
      const atNs = process.hrtime.bigint() - t0;
      pending += (chunk as Buffer).toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        const frame = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (!frame.startsWith('data: ')) continue;
        const event = { data: frame.slice(6), atNs };
        events.push(event);
        onEvent?.(event);
      }
    }
    return { status, headersNs, events, endNs: process.hrtime.bigint() - t0, error: null };
  } catch (err) {
    return { status, headersNs, events, endNs: process.hrtime.bigint() - t0, error: (err as Error).message };
  }
}
