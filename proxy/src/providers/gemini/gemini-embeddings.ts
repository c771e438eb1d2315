import { Errors } from '@gateway/shared';
import type { EmbeddingsRequest, EmbeddingsResult } from '../adapter.js';
import { embeddingInputs, embeddingsAnswer, encodingOf, isVector } from '../embeddings-answer.js';
import { GOOGLE_TASK_TYPES, inputTypeOf } from '../embeddings-input-type.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { toCount } from '../stream-inspector.js';

/**
 * OpenAI's embeddings request as Gemini's `models/{model}:batchEmbedContents` and back. Each input
 * text is one request `{model: "models/{model}", content: {parts: [{text}]}}`, with
 * `outputDimensionality` from `dimensions` and `taskType` from `input_type`
 * (embeddings-input-type.ts). Gemini takes text only: token ids are refused (400, `input`). `user`
 * has no Gemini field and is not sent; `encoding_format` is applied by the gateway (Gemini
 * answers floats). The answer, `{embeddings: [{values}]}`, carries no token count
 * on most versions of the API: the input is then billed at the gateway's estimate
 * (policy/embeddings-estimate.ts), and at `usageMetadata.promptTokenCount` when it is there.
 */
export interface GeminiBatchEmbedRequest {
  requests: { model: string; content: { parts: { text: string }[] }; outputDimensionality?: number; taskType?: string }[];
}

interface GeminiBatchEmbedResponse {
  embeddings?: unknown;
  usageMetadata?: { promptTokenCount?: unknown } | null;
}

export function toGeminiEmbeddings(request: EmbeddingsRequest, model: string): GeminiBatchEmbedRequest {
  const inputs = embeddingInputs(request.body.input);
  if (inputs.kind !== 'text') throw Errors.invalidField('input', 'Gemini embeds text only: `input` must be a string or an array of strings, not token ids.');
  const dimensions = request.body.dimensions;
  const inputType = inputTypeOf(request.body);
  const extra = { ...(typeof dimensions === 'number' ? { outputDimensionality: dimensions } : {}), ...(inputType === null ? {} : { taskType: GOOGLE_TASK_TYPES[inputType] }) };
  const name = `models/${model}`;
  return { requests: inputs.texts.map((text) => ({ model: name, content: { parts: [{ text }] }, ...extra })) };
}

export function fromGeminiEmbeddings(provider: string, body: Buffer, request: EmbeddingsRequest, expected: number): EmbeddingsResult {
  let answer: GeminiBatchEmbedResponse;
  try {
    answer = JSON.parse(body.toString('utf8')) as GeminiBatchEmbedResponse;
  } catch {
    throw Errors.providerNotJson(provider);
  }
  const embeddings = typeof answer === 'object' && answer !== null ? answer.embeddings : undefined;
  if (!Array.isArray(embeddings) || embeddings.length !== expected) {
    throw Errors.providerEmbeddingsCount(provider, Array.isArray(embeddings) ? embeddings.length : null, expected);
  }
  const vectors = embeddings.map((item: { values?: unknown } | null, i) => {
    const values = item?.values;
    if (!Array.isArray(values) || !isVector(values)) throw Errors.providerNotAnEmbedding(provider, `embeddings[${i}]`);
    return values;
  });
  const counted = answer.usageMetadata?.promptTokenCount;
  const input = typeof counted === 'number' ? toCount(counted) : estimateEmbeddingsTokens(request.body.input);
  return { body: embeddingsAnswer(request.model, vectors, encodingOf(request.body), input), usage: { input } };
}
