import type { EmbeddingsBody, EmbeddingsRequest } from './adapter.js';

/** An embeddings request as the gateway hands it to an adapter (the body validated, its bytes kept). */
export function embeddingsRequest(model: string, body: Partial<EmbeddingsBody> & Record<string, unknown>, upstreamModel = model): EmbeddingsRequest {
  const full = { model, input: 'Tell me something', ...body } as EmbeddingsBody;
  return { body: full, raw: Buffer.from(JSON.stringify(full)), model, upstreamModel, requestId: 'embeddings-1' };
}

export interface EmbeddingsAnswer {
  object: string;
  data: { object: string; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export function parseAnswer(body: Buffer): EmbeddingsAnswer {
  return JSON.parse(body.toString('utf8')) as EmbeddingsAnswer;
}
