import type { Cancel } from '../cancel.js';
import { readSse } from '../sse-reader.js';
import type { UpstreamResponse } from '../upstream-request.js';
import type { GeminiStreamTranslator } from '../../conversion/chat-gemini/gemini-stream.js';

/**
 * Gemini's stream read with the shared SSE loop: it marks no end, so the answer is whole when the
 * body ends. Used by the Gemini adapter and by Vertex AI's Gemini models alike.
 */
export function geminiEvents(res: UpstreamResponse, provider: string, cancel: Cancel, translator: GeminiStreamTranslator): AsyncGenerator<string> {
  return readSse(res, provider, cancel, {
    event(event, out) {
      translator.push(event.data, out);
      return false;
    },
    end(out) {
      translator.end(out);
    },
  });
}
