import { createHash } from 'node:crypto';
import { Errors } from '@gateway/shared';
import type { EmbeddingsRequest, EmbeddingsResult } from '../adapter.js';
import { embeddingInputs, embeddingsAnswer, encodingOf } from '../embeddings-answer.js';
import { countTokens } from './mock-tokens.js';

/**
 * The mock's embeddings: for each input a unit vector drawn from the SHA-256 of its text (token
 * ids: of the ids, comma-joined) and its length, so the same input always gets the same vector and
 * different inputs different ones. `dimensions` sets the length (default 8, at most 4,096, as a
 * real model has a maximum); the values are float32, so the float and base64 answers carry the
 * same numbers. Usage is the mock's tokens of each text (mock-tokens.ts), or the number of ids.
 */
export const MOCK_EMBEDDING_DIMENSIONS = 8;
export const MOCK_MAX_DIMENSIONS = 4096;

export function mockEmbeddings(request: EmbeddingsRequest): EmbeddingsResult {
  const dimensions = request.body.dimensions ?? MOCK_EMBEDDING_DIMENSIONS;
  if (dimensions > MOCK_MAX_DIMENSIONS) {
    throw Errors.invalidField('dimensions', `The mock provider makes embeddings of at most ${MOCK_MAX_DIMENSIONS} dimensions.`);
  }
  const inputs = embeddingInputs(request.body.input);
  let tokens = 0;
  const vectors: number[][] = [];
  if (inputs.kind === 'text') {
    for (const text of inputs.texts) {
      tokens += countTokens(text);
      vectors.push(mockVector(text, dimensions));
    }
  } else {
    for (const ids of inputs.ids) {
      tokens += ids.length;
      vectors.push(mockVector(ids.join(','), dimensions));
    }
  }
  return { body: embeddingsAnswer(request.model, vectors, encodingOf(request.body), tokens), usage: { input: tokens } };
}

/** A deterministic unit vector of float32 values for `text`. */
export function mockVector(text: string, dimensions: number): number[] {
  const raw = new Array<number>(dimensions);
  let block: Buffer | null = null;
  for (let i = 0; i < dimensions; i++) {
    // Eight 32-bit values per SHA-256 block, each block hashed with its number.
    if (i % 8 === 0) block = createHash('sha256').update(`${dimensions}\u0000${i / 8}\u0000${text}`).digest();
    raw[i] = (block as Buffer).readUInt32LE((i % 8) * 4) / 2 ** 31 - 1;
  }
  let norm = 0;
  for (const v of raw) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  return raw.map((v) => Math.fround(v / norm));
}
