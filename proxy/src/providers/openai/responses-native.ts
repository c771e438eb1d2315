import { Errors, sseData, type FinishReason } from '@gateway/shared';
import type { CompletionResult, StreamMeta, Usage } from '../../request/internal-request.js';
import type { Cancel } from '../cancel.js';
import { readSse } from '../sse-reader.js';
import { streamErrorEvent } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';

/**
 * OpenAI's Responses API spoken natively (a provider entry with `responses: native`): the client's
 * body went to `{base_url}/responses` as it came, and its answer comes back as the provider sent
 * it, a Response object or its event stream. The gateway reads only the usage and how the
 * response ended, to meter and record it.
 */
interface ResponseFacts {
  id?: unknown;
  status?: unknown;
  usage?: { input_tokens?: unknown; output_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } | null } | null;
  incomplete_details?: { reason?: unknown } | null;
  output?: unknown;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function usageOf(response: ResponseFacts): Usage | null {
  const usage = response.usage;
  if (usage === undefined || usage === null) return null;
  return { input: count(usage.input_tokens), output: count(usage.output_tokens), cached: count(usage.input_tokens_details?.cached_tokens) };
}

/** How a response ended, as the gateway's finish reason (the provider's own word kept when it maps to none). */
function finishOf(response: ResponseFacts): { finishReason: FinishReason; rawFinishReason?: string } {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    if (reason === 'max_output_tokens') return { finishReason: 'max_tokens' };
    if (reason === 'content_filter') return { finishReason: 'content_filter' };
    return { finishReason: 'other', rawFinishReason: typeof reason === 'string' ? reason : 'incomplete' };
  }
  if (response.status === 'failed') return { finishReason: 'error' };
  const output = Array.isArray(response.output) ? (response.output as { type?: unknown }[]) : [];
  return output.some((item) => item?.type === 'function_call' || item?.type === 'custom_tool_call') ? { finishReason: 'tool_calls' } : { finishReason: 'stop' };
}

/** A whole Response object, metered. */
export function nativeResponse(provider: string, body: Buffer): CompletionResult {
  let response: unknown;
  try {
    response = JSON.parse(body.toString('utf8'));
  } catch {
    throw Errors.providerNotJson(provider);
  }
  if (typeof response !== 'object' || response === null || Array.isArray(response)) throw Errors.providerSentNot(provider, 'a Response object');
  const facts = response as ResponseFacts;
  const usage = usageOf(facts) ?? { input: 0, output: 0 };
  return { status: 200, body, native: true, usage, ...finishOf(facts), ...(typeof facts.id === 'string' ? { responseId: facts.id } : {}) };
}

/** The events that end a response: their `response` is the whole Response, usage included. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** A Response event stream, frame by frame as the provider sent it, metered from its last event. */
export function nativeResponseEvents(res: UpstreamResponse, provider: string, meta: StreamMeta, cancel: Cancel): AsyncGenerator<string> {
  return readSse(res, provider, cancel, {
    event(event, out) {
      const type = event.event ?? typeOf(event.data);
      if (type === 'error') {
        meta.failed = true;
        throw streamErrorEvent(provider, event.data);
      }
      out.push(event.event === undefined ? sseData(event.data) : `event: ${event.event}\n${sseData(event.data)}`);
      if (type === null || !TERMINAL.has(type)) return false;
      let response: ResponseFacts = {};
      try {
        response = ((JSON.parse(event.data) as { response?: ResponseFacts }).response ?? {}) as ResponseFacts;
      } catch {
        // The stream ended without counts the gateway can read: the estimate stands in.
      }
      meta.usage = usageOf(response);
      if (typeof response.id === 'string') meta.responseId = response.id;
      const finish = finishOf(response);
      meta.finishReason = finish.finishReason;
      if (finish.rawFinishReason !== undefined) meta.rawFinishReason = finish.rawFinishReason;
      return true;
    },
    end() {
      throw Errors.providerStreamIncomplete(provider);
    },
  });
}

function typeOf(data: string): string | null {
  const match = /"type"\s*:\s*"([^"]+)"/.exec(data.slice(0, 200));
  return match?.[1] ?? null;
}
