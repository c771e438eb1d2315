import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * SSE in both directions. Parsing a provider's stream is left to eventsource-parser (comments,
 * CRLF, multi-line data and events split across TCP chunks are its business, not ours); writing
 * our own events is one line of framing.
 */
export type SseEvent = EventSourceMessage;

export interface SseDecoder {
  /** Feed decoded text as it arrives; events are delivered to the callback synchronously. */
  feed(text: string): void;
  reset(): void;
}

export function createSseDecoder(onEvent: (event: SseEvent) => void): SseDecoder {
  const parser = createParser({ onEvent });
  return { feed: (text) => parser.feed(text), reset: () => parser.reset() };
}

/** One `data:` event. `data` must not contain a newline (JSON.stringify output never does). */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
