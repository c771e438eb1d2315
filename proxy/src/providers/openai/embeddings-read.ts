import { Errors } from '@gateway/shared';
import type { EmbeddingsRequest, EmbeddingsResult } from '../adapter.js';
import { embeddingInputs, embeddingsAnswer, encodingOf, isVector } from '../embeddings-answer.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { toCount } from '../stream-inspector.js';

/**
 * An OpenAI embeddings answer (`{object: "list", data: [{object: "embedding", index,
 * embedding}], model, usage: {prompt_tokens, total_tokens}}`) checked and rebuilt for the client:
 * one vector per input, placed by `index`; `model` the client's id; each vector in the encoding
 * the client asked for (a server that ignored `encoding_format: "base64"` and sent floats is
 * encoded here). `usage.prompt_tokens` is billed; an answer without it (some compatible servers)
 * is billed the gateway's estimate.
 */
interface WireEmbeddings {
  data?: unknown;
  usage?: { prompt_tokens?: unknown } | null;
}

export function readOpenAiEmbeddings(provider: string, body: Buffer, request: EmbeddingsRequest): EmbeddingsResult {
  let answer: WireEmbeddings;
  try {
    answer = JSON.parse(body.toString('utf8')) as WireEmbeddings;
  } catch {
    throw Errors.providerNotJson(provider);
  }
  const inputs = embeddingInputs(request.body.input);
  const expected = inputs.kind === 'text' ? inputs.texts.length : inputs.ids.length;
  const data = typeof answer === 'object' && answer !== null ? answer.data : undefined;
  if (!Array.isArray(data) || data.length !== expected) {
    throw Errors.providerEmbeddingsCount(provider, Array.isArray(data) ? data.length : null, expected);
  }
  const vectors: (number[] | string)[] = new Array(expected);
  for (let i = 0; i < data.length; i++) {
    const item = data[i] as { index?: unknown; embedding?: unknown } | null;
    const index = typeof item?.index === 'number' ? item.index : i;
    if (!Number.isInteger(index) || index < 0 || index >= expected || vectors[index] !== undefined || !isVector(item?.embedding)) {
      throw Errors.providerNotAnEmbedding(provider, `data[${i}]`);
    }
    vectors[index] = item.embedding;
  }
  const counted = answer.usage?.prompt_tokens;
  const input = typeof counted === 'number' ? toCount(counted) : estimateEmbeddingsTokens(request.body.input);
  return { body: embeddingsAnswer(request.model, vectors, encodingOf(request.body), input), usage: { input } };
}
