import type { ServerResponse } from 'node:http';
import { sendJson, sendSse, startWireMock, type RunningWireMock, type WireRequest } from '../../../../test-support/wire-mock.js';
import { SCENARIOS } from '../conformance.case.js';

/**
 * OpenAI's Chat Completions wire format (the API reference's fields, chunk shapes, error body),
 * answering the conformance scenarios by the `model` field; any other model is `conf-text`.
 */
const usage = { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, prompt_tokens_details: { cached_tokens: 3 } };
const error = (message: string, type: string) => ({ error: { message, type, param: null, code: null } });

export function startOpenAiWireMock(): Promise<RunningWireMock> {
  return startWireMock((req, res) => {
    const model = String(req.body.model ?? '');
    if (req.body.stream === true) return stream(req, res, model);
    switch (model) {
      case SCENARIOS.status400:
        return sendJson(res, 400, error('bad request from provider', 'invalid_request_error'));
      case SCENARIOS.status429:
        return sendJson(res, 429, error('Rate limit reached', 'requests'), { 'retry-after': '7' });
      case SCENARIOS.status500:
        return sendJson(res, 500, error('The server had an error', 'server_error'));
      case SCENARIOS.slow:
        setTimeout(() => !res.destroyed && sendJson(res, 200, completion(model, 'Hello there', 'stop')), 2_000);
        return;
      case SCENARIOS.tools:
        return sendJson(res, 200, {
          ...completion(model, null, 'tool_calls'),
          choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, logprobs: null, finish_reason: 'tool_calls' }],
        });
      case SCENARIOS.length:
        return sendJson(res, 200, completion(model, 'Hello', 'length'));
      default:
        return sendJson(res, 200, completion(model, 'Hello there', 'stop'));
    }
  });
}

function completion(model: string, content: string | null, finish: string) {
  return {
    id: 'chatcmpl-wire',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish }],
    usage,
    system_fingerprint: null,
  };
}

function stream(req: WireRequest, res: ServerResponse, model: string): void {
  if (model === SCENARIOS.status500) return sendJson(res, 500, error('The server had an error', 'server_error'));
  const withUsage = (req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const base = { id: 'chatcmpl-wire', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: null };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  if (model === SCENARIOS.tools) {
    frames.push(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    frames.push(chunk({}, 'tool_calls'));
  } else {
    frames.push(chunk({ content: 'Hello' }));
    if (model === SCENARIOS.streamError) {
      frames.push(`data: ${JSON.stringify(error('The server had an error while processing your request.', 'server_error'))}\n\n`);
      return sendSse(res, frames);
    }
    if (model === SCENARIOS.hang) return sendSse(res, frames, { hang: true });
    frames.push(chunk({ content: ' there' }));
    frames.push(chunk({}, model === SCENARIOS.length ? 'length' : 'stop'));
  }
  if (withUsage) frames.push(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  frames.push('data: [DONE]\n\n');
  sendSse(res, frames);
}
