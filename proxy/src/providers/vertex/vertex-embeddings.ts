import { Errors } from '@gateway/shared';
import type { EmbeddingsRequest, EmbeddingsResult } from '../adapter.js';
import { boundedCalls, SPLIT_IN_FLIGHT } from '../bounded-all.js';
import type { Cancel } from '../cancel.js';
import { embeddingInputs, embeddingsAnswer, encodingOf, isVector } from '../embeddings-answer.js';
import { GOOGLE_TASK_TYPES, inputTypeOf } from '../embeddings-input-type.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { toCount } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';

/**
 * OpenAI's embeddings request as Vertex AI's `…/publishers/google/models/{model}:predict` and
 * back: each input text is one instance `{content}`, `dimensions` is
 * `parameters.outputDimensionality`, and the answer's `predictions[i].embeddings.values` are the
 * vectors. Vertex takes at most 250 instances a request, and Google's Gemini embedding models
 * (`gemini-embedding-*`) one: a longer input is sent as several requests, eight at a time, their
 * vectors put back in order. The prompt tokens are the sum of `statistics.token_count`, or the
 * gateway's estimate when a prediction has none. `input_type` (embeddings-input-type.ts) is each
 * instance's `task_type`. Vertex embeds text: token ids are refused (400, `input`); `user` has no
 * field there and is not sent; `encoding_format` is applied by the gateway.
 */
export type EmbedSend = (path: string, payload: Buffer, cancel: Cancel, request: EmbeddingsRequest) => Promise<UpstreamResponse>;

const MAX_INSTANCES = 250;
const ONE_INSTANCE = /^gemini-embedding/;

export interface VertexPredictRequest {
  instances: { content: string; task_type?: string }[];
  parameters?: { outputDimensionality: number };
}

interface VertexPrediction {
  embeddings?: { values?: unknown; statistics?: { token_count?: unknown } | null } | null;
}

/** The predict requests an embeddings request becomes, in input order. */
export function toVertexPredictions(request: EmbeddingsRequest, model: string): VertexPredictRequest[] {
  const inputs = embeddingInputs(request.body.input);
  if (inputs.kind !== 'text') throw Errors.invalidField('input', 'Vertex AI embeds text only: `input` must be a string or an array of strings, not token ids.');
  const dimensions = request.body.dimensions;
  const parameters = typeof dimensions === 'number' ? { parameters: { outputDimensionality: dimensions } } : {};
  const inputType = inputTypeOf(request.body);
  const task = inputType === null ? null : GOOGLE_TASK_TYPES[inputType];
  const size = ONE_INSTANCE.test(model) ? 1 : MAX_INSTANCES;
  const out: VertexPredictRequest[] = [];
  for (let i = 0; i < inputs.texts.length; i += size) {
    out.push({ instances: inputs.texts.slice(i, i + size).map((content) => (task === null ? { content } : { content, task_type: task })), ...parameters });
  }
  return out;
}

export async function vertexEmbed(provider: string, modelPath: string, model: string, request: EmbeddingsRequest, cancel: Cancel, send: EmbedSend): Promise<EmbeddingsResult> {
  const calls = toVertexPredictions(request, model);
  const answers = await boundedCalls(cancel, calls.length, SPLIT_IN_FLIGHT, (i, own) => predict(provider, `${modelPath}:predict`, calls[i] as VertexPredictRequest, request, own, send));
  const vectors: (number[] | string)[] = [];
  let counted = 0;
  let uncounted = false;
  for (const predictions of answers) {
    for (const prediction of predictions) {
      const embeddings = prediction?.embeddings;
      const values = embeddings?.values;
      if (!Array.isArray(values) || !isVector(values)) throw Errors.providerNotAnEmbedding(provider, `predictions[${vectors.length}].embeddings.values`);
      vectors.push(values);
      const tokens = embeddings?.statistics?.token_count;
      if (typeof tokens === 'number') counted += toCount(tokens);
      else uncounted = true;
    }
  }
  const input = uncounted ? estimateEmbeddingsTokens(request.body.input) : counted;
  return { body: embeddingsAnswer(request.model, vectors, encodingOf(request.body), input), usage: { input } };
}

async function predict(provider: string, path: string, call: VertexPredictRequest, request: EmbeddingsRequest, cancel: Cancel, send: EmbedSend): Promise<VertexPrediction[]> {
  const res = await send(path, Buffer.from(JSON.stringify(call)), cancel, request);
  let body: Buffer;
  try {
    body = await res.body();
  } catch (err) {
    throw transportError(provider, err, cancel.aborted);
  }
  let answer: { predictions?: unknown };
  try {
    answer = JSON.parse(body.toString('utf8')) as { predictions?: unknown };
  } catch {
    throw Errors.providerNotJson(provider);
  }
  const predictions = typeof answer === 'object' && answer !== null ? answer.predictions : undefined;
  if (!Array.isArray(predictions) || predictions.length !== call.instances.length) {
    throw Errors.providerEmbeddingsCount(provider, Array.isArray(predictions) ? predictions.length : null, call.instances.length);
  }
  return predictions as VertexPrediction[];
}
