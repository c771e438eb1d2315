import type { ServerResponse } from 'node:http';
import { sendJson, sendSse, startWireMock, type RunningWireMock } from '../../../test-support/wire-mock.js';
import { SCENARIOS } from '../../src/providers/conformance.case.js';
import { openAiEmbeddingsAnswer } from './openai-embeddings-wire.js';

/**
 * OpenAI's Chat Completions wire format (the API reference's fields, chunk shapes, error body),
 * answering the conformance scenarios by the `model` field; any other model is `conf-text`.
 * The answer is first built as a plan (`openAiAnswer`) and then sent (`sendPlan`), so that a mock of
 * another provider speaking this format (Azure OpenAI) can reuse the scenarios and add its own
 * fields.
 *
 * `POST …/embeddings` is OpenAI's embeddings API, steered the same way
 * (openai-embeddings-wire.case.ts).
 *
 * Reasoning models are refused as OpenAI refuses them: a model named like `o1`, `o3-mini`, `o4-mini`
 * or `gpt-5…` answers 400 to `max_tokens` and to a `temperature` or `top_p` other than 1.
 */
export type WirePlan =
  | { kind: 'json'; status: number; body: Record<string, unknown>; headers?: Record<string, string>; delayMs?: number }
  /** `end`: `done` sends `[DONE]`, `close` ends the body without it, `hang` leaves it open. */
  | { kind: 'sse'; events: Record<string, unknown>[]; end: 'done' | 'close' | 'hang' };

export const WIRE_USAGE = { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, prompt_tokens_details: { cached_tokens: 3 } };

export const openAiError = (message: string, type: string, param: string | null = null, code: string | null = null) => ({ error: { message, type, param, code } });

const REASONING_MODEL = /^(o\d|gpt-5)/;

export function startOpenAiWireMock(): Promise<RunningWireMock> {
  return startWireMock((req, res) => {
    const model = String(req.body.model ?? '');
    sendPlan(res, req.path.endsWith('/embeddings') ? openAiEmbeddingsAnswer(model, req.body) : openAiAnswer(model, req.body));
  });
}

export function sendPlan(res: ServerResponse, plan: WirePlan): void {
  if (plan.kind === 'json') {
    if (plan.delayMs === undefined) return sendJson(res, plan.status, plan.body, plan.headers);
    setTimeout(() => !res.destroyed && sendJson(res, plan.status, plan.body, plan.headers), plan.delayMs);
    return;
  }
  const frames = plan.events.map((event) => `data: ${JSON.stringify(event)}\n\n`);
  if (plan.end === 'done') frames.push('data: [DONE]\n\n');
  sendSse(res, frames, { hang: plan.end === 'hang' });
}

/** OpenAI's answer to a request for `model` (the scenario). */
export function openAiAnswer(model: string, body: Record<string, unknown>): WirePlan {
  const refused = reasoningRefusal(model, body);
  if (refused !== null) return { kind: 'json', status: 400, body: refused };
  if (body.stream === true) return stream(model, body);
  const json = (status: number, answer: Record<string, unknown>, headers?: Record<string, string>): WirePlan => ({ kind: 'json', status, body: answer, ...(headers ? { headers } : {}) });
  switch (model) {
    case SCENARIOS.status400:
      return json(400, openAiError('bad request from provider', 'invalid_request_error'));
    case SCENARIOS.status429:
      return json(429, openAiError('Rate limit reached', 'requests'), { 'retry-after': '7' });
    case SCENARIOS.status500:
      return json(500, openAiError('The server had an error', 'server_error'));
    case SCENARIOS.slow:
      return { kind: 'json', status: 200, body: completion(model, 'Hello there', 'stop'), delayMs: 2_000 };
    case SCENARIOS.tools:
      return json(200, {
        ...completion(model, null, 'tool_calls'),
        choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, logprobs: null, finish_reason: 'tool_calls' }],
      });
    case SCENARIOS.length:
      return json(200, completion(model, 'Hello', 'length'));
    default:
      return json(200, completion(model, 'Hello there', 'stop'));
  }
}

function reasoningRefusal(model: string, body: Record<string, unknown>): Record<string, unknown> | null {
  if (!REASONING_MODEL.test(model)) return null;
  if (body.max_tokens !== undefined) {
    return openAiError("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'invalid_request_error', 'max_tokens', 'unsupported_parameter');
  }
  for (const param of ['temperature', 'top_p']) {
    const value = body[param];
    if (value !== undefined && value !== null && value !== 1) {
      return openAiError(`Unsupported value: '${param}' does not support ${String(value)} with this model. Only the default (1) value is supported.`, 'invalid_request_error', param, 'unsupported_value');
    }
  }
  return null;
}

function completion(model: string, content: string | null, finish: string) {
  return {
    id: 'chatcmpl-wire',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish }],
    usage: WIRE_USAGE,
    system_fingerprint: null,
  };
}

function stream(model: string, body: Record<string, unknown>): WirePlan {
  if (model === SCENARIOS.status500) return { kind: 'json', status: 500, body: openAiError('The server had an error', 'server_error') };
  const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const base = { id: 'chatcmpl-wire', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: null };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) });
  const events = [chunk({ role: 'assistant', content: '' })];
  if (model === SCENARIOS.tools) {
    events.push(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    events.push(chunk({}, 'tool_calls'));
  } else {
    events.push(chunk({ content: 'Hello' }));
    if (model === SCENARIOS.streamError) {
      return { kind: 'sse', events: [...events, openAiError('The server had an error while processing your request.', 'server_error')], end: 'close' };
    }
    if (model === SCENARIOS.hang) return { kind: 'sse', events, end: 'hang' };
    events.push(chunk({ content: ' there' }));
    events.push(chunk({}, model === SCENARIOS.length ? 'length' : 'stop'));
  }
  const usage: Record<string, unknown>[] = withUsage ? [{ ...base, choices: [], usage: WIRE_USAGE }] : [];
  return { kind: 'sse', events: [...events, ...usage], end: 'done' };
}
