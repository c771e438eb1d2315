import { createSseDecoder, type SseEvent } from '@gateway/shared';
import type { Cancel } from './cancel.js';
import { transportError } from './upstream-error.js';
import type { UpstreamResponse } from './upstream-request.js';

/**
 * What an adapter does with its provider's stream, event by event. `event` pushes what to send
 * on (OpenAI chunks, or native frames) to `out` and returns true once the answer is whole (the
 * provider's end marker); it throws a GatewayError when the provider reports a failure. `end`
 * runs when the body ended without that marker: it throws if the answer is incomplete, or pushes
 * what a translator still holds.
 */
export interface SseHandler {
  event(event: SseEvent, out: string[]): boolean;
  end(out: string[]): void;
}

/**
 * Every adapter's SSE read loop, once: the body's bytes decoded as UTF-8 across chunk boundaries,
 * framed by eventsource-parser (shared/src/sse.ts), each chunk's events handled in order with no
 * promise per event, the outputs yielded one by one so that a consumer that waits slows the
 * provider. At the end marker the rest of the body is dropped in the background and the pooled
 * connection kept; a transport failure becomes the provider's GatewayError; a consumer that leaves
 * early (client gone, key revoked) stops the provider too.
 */
export async function* readSse(res: UpstreamResponse, provider: string, cancel: Cancel, handler: SseHandler): AsyncGenerator<string> {
  const text = new TextDecoder();
  const events: SseEvent[] = [];
  const out: string[] = [];
  let head = 0;
  let finished = false;
  const sse = createSseDecoder((event) => events.push(event));
  try {
    for await (const chunk of res.stream()) {
      sse.feed(text.decode(chunk, { stream: true }));
      while (head < events.length) {
        finished = handler.event(events[head++] as SseEvent, out);
        for (let i = 0; i < out.length; i++) yield out[i] as string;
        out.length = 0;
        if (finished) break;
      }
      events.length = 0;
      head = 0;
      if (finished) {
        res.release();
        break;
      }
    }
  } catch (err) {
    if (finished && !cancel.aborted) return;
    res.destroy();
    throw transportError(provider, err, cancel.aborted);
  } finally {
    if (!finished) res.destroy();
  }
  if (finished) return;
  handler.end(out);
  for (let i = 0; i < out.length; i++) yield out[i] as string;
}
