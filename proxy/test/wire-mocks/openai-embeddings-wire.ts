import { SCENARIOS } from '../../src/providers/conformance.case.js';
import { floatsToBase64 } from '../../src/providers/embeddings-answer.js';
import { openAiError, type WirePlan } from './openai-wire-mock.js';

/**
 * OpenAI's `POST /v1/embeddings` as its API reference documents it: `{object: "list", data:
 * [{object: "embedding", index, embedding}], model, usage: {prompt_tokens, total_tokens}}`, each
 * embedding a float array or, with `encoding_format: "base64"`, the base64 of its float32 values;
 * errors in OpenAI's error body. Steered by the model name like the chat scenarios (conf-400,
 * conf-429, conf-500, conf-slow), plus:
 *
 *   text-embedding-ada-002   refuses `dimensions`, as OpenAI's first-generation model does
 *   emb-floats-only          a compatible server that ignores `encoding_format` and sends floats
 *   emb-no-usage             a compatible server that sends no `usage`
 *   emb-short                one embedding fewer than inputs (a broken server)
 *
 * Vector j of input i is `(i + 1) * (j + 1) / 16` (exact in float32), WIRE_EMBEDDING_DIMENSIONS
 * long unless `dimensions` says otherwise; each input counts WIRE_TOKENS_PER_INPUT prompt tokens.
 */
export const WIRE_EMBEDDING_DIMENSIONS = 4;
export const WIRE_TOKENS_PER_INPUT = 5;

export const wireVector = (index: number, dimensions = WIRE_EMBEDDING_DIMENSIONS): number[] => Array.from({ length: dimensions }, (_, j) => ((index + 1) * (j + 1)) / 16);

const INVALID_INPUT = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";

export function openAiEmbeddingsAnswer(model: string, body: Record<string, unknown>): WirePlan {
  const json = (status: number, answer: Record<string, unknown>, headers?: Record<string, string>): WirePlan => ({ kind: 'json', status, body: answer, ...(headers ? { headers } : {}) });
  switch (model) {
    case SCENARIOS.status400:
      return json(400, openAiError('bad request from provider', 'invalid_request_error'));
    case SCENARIOS.status429:
      return json(429, openAiError('Rate limit reached', 'requests'), { 'retry-after': '7' });
    case SCENARIOS.status500:
      return json(500, openAiError('The server had an error', 'server_error'));
  }
  const inputs = inputCount(body.input);
  if (inputs === null) return json(400, openAiError(INVALID_INPUT, 'invalid_request_error'));
  if (model === 'text-embedding-ada-002' && body.dimensions !== undefined) {
    return json(400, openAiError('This model does not support specifying dimensions.', 'invalid_request_error'));
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : WIRE_EMBEDDING_DIMENSIONS;
  const base64 = body.encoding_format === 'base64' && model !== 'emb-floats-only';
  const count = model === 'emb-short' ? inputs - 1 : inputs;
  const data = Array.from({ length: count }, (_, index) => {
    const vector = wireVector(index, dimensions);
    return { object: 'embedding', index, embedding: base64 ? floatsToBase64(vector) : vector };
  });
  const tokens = inputs * WIRE_TOKENS_PER_INPUT;
  const answer = { object: 'list', data, model, ...(model === 'emb-no-usage' ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }) };
  if (model === SCENARIOS.slow) return { kind: 'json', status: 200, body: answer, delayMs: 2_000 };
  return json(200, answer);
}

/** Inputs in a body OpenAI would take, or null for one it refuses. */
function inputCount(input: unknown): number | null {
  if (typeof input === 'string') return input === '' ? null : 1;
  if (!Array.isArray(input) || input.length === 0 || input.length > 2048) return null;
  if (input.every((x) => typeof x === 'number')) return 1;
  if (input.every((x) => typeof x === 'string' && x !== '')) return input.length;
  if (input.every((x) => Array.isArray(x) && x.length > 0 && x.every((id) => typeof id === 'number'))) return input.length;
  return null;
}
