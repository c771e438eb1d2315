import type { HttpResponse, TemplatedApp } from '@gateway/proxy/uws';
import type { MockBehaviour, MockUpstreamStats } from './mock-upstream.js';

/** What every mock route shares: reading a body, cutting an answer into pieces, paced SSE frames. */
export interface MockState {
  aborted: boolean;
  timers: NodeJS.Timeout[];
}

export function readAll(res: HttpResponse, done: (body: Buffer) => void): void {
  const parts: Buffer[] = [];
  res.onData((chunk, isLast) => {
    parts.push(Buffer.from(chunk.slice(0)));
    if (isLast) done(Buffer.concat(parts));
  });
}

/** `text` in `n` pieces cut at word boundaries (a piece is never empty). */
export function pieces(text: string, n: number): string[] {
  const words = text.split(/(?<= )/);
  if (n <= 1) return [text];
  const out: string[] = [];
  const per = Math.max(1, Math.ceil(words.length / n));
  for (let i = 0; i < n; i++) out.push(words.slice(i * per, (i + 1) * per).join('') || ' ');
  return out;
}

/** Writes SSE frames `gap_ms` apart (or at once), stopping early for `hang_after_chunks`. */
export function sendFrames(res: HttpResponse, frames: readonly string[], b: MockBehaviour, state: MockState, stats: MockUpstreamStats): void {
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-cache');
  });
  const gap = b.gap_ms ?? 0;
  const hangAfter = b.hang_after_chunks;
  let i = 0;
  const step = () => {
    if (state.aborted) return;
    if (hangAfter !== undefined && i >= hangAfter) return;
    if (i >= frames.length) {
      res.cork(() => res.end());
      stats.completed++;
      return;
    }
    const frame = frames[i++] as string;
    res.cork(() => res.write(frame));
    if (gap > 0) state.timers.push(setTimeout(step, gap));
    else step();
  };
  step();
}

/** Answers one request once its body is read and its `delay_ms` has passed (never if aborted or `hang`). */
export type MockAnswer = (res: HttpResponse, body: Record<string, unknown>, behaviour: MockBehaviour, state: MockState) => void;

/**
 * A POST route of the mock: records the request's headers and body in `stats`, merges the body's
 * `mock` steering over the defaults, keeps an abort flag (and cancels pending timers on abort),
 * and hands the request to `answer` after the steered delay.
 */
export function mockRoute(app: TemplatedApp, path: string, stats: MockUpstreamStats, defaults: MockBehaviour, answer: MockAnswer): void {
  app.post(path, (res, req) => {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const state: MockState = { aborted: false, timers: [] };
    res.onAborted(() => {
      state.aborted = true;
      stats.aborted++;
      for (const t of state.timers) clearTimeout(t);
    });
    readAll(res, (raw) => {
      stats.requests++;
      stats.lastHeaders = headers;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        body = {};
      }
      stats.lastBody = body;
      const behaviour: MockBehaviour = { ...defaults, ...((body.mock as MockBehaviour | undefined) ?? {}) };
      const go = () => {
        if (state.aborted || behaviour.hang) return;
        answer(res, body, behaviour, state);
      };
      if (behaviour.delay_ms) state.timers.push(setTimeout(go, behaviour.delay_ms));
      else go();
    });
  });
}
