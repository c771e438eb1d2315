import type { EmbeddingsBody, EmbeddingsInput } from './adapter.js';
import { jsonBytes } from '../request/json-bytes.js';

/**
 * What every embeddings adapter needs around its own wire format: the client's input as a list of
 * texts or of token-id arrays, and OpenAI's answer built from the vectors a provider returned, in
 * the encoding the client asked for. OpenAI's `base64` is the vector's float32 values, little
 * endian, in base64; a provider that only gives floats is encoded here, so a client (the openai
 * SDK asks for base64 by default) gets the same bytes whoever served it.
 */
export type EmbeddingInputs = { kind: 'text'; texts: readonly string[] } | { kind: 'tokens'; ids: readonly (readonly number[])[] };

/** The validated `input` as texts or token-id arrays, one per embedding asked for. */
export function embeddingInputs(input: EmbeddingsInput): EmbeddingInputs {
  if (typeof input === 'string') return { kind: 'text', texts: [input] };
  const first = input[0];
  if (typeof first === 'string') return { kind: 'text', texts: input as readonly string[] };
  if (typeof first === 'number') return { kind: 'tokens', ids: [input as readonly number[]] };
  return { kind: 'tokens', ids: input as readonly (readonly number[])[] };
}

export type EmbeddingEncoding = 'float' | 'base64';

export function encodingOf(body: EmbeddingsBody): EmbeddingEncoding {
  return body.encoding_format === 'base64' ? 'base64' : 'float';
}

/** OpenAI's base64 encoding of a vector: float32, little endian. */
export function floatsToBase64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i] as number, i * 4);
  return bytes.toString('base64');
}

export function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** A provider's vector (floats, or OpenAI's base64) in the encoding the client asked for. */
export function encodeVector(vector: readonly number[] | string, encoding: EmbeddingEncoding): number[] | string {
  if (encoding === 'base64') return typeof vector === 'string' ? vector : floatsToBase64(vector);
  return typeof vector === 'string' ? base64ToFloats(vector) : (vector as number[]);
}

/** A vector as a provider sent it, if it is one: an array of finite numbers, or a base64 string. */
export function isVector(value: unknown): value is number[] | string {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value)) return false;
  for (const v of value) if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  return true;
}

/** OpenAI's embeddings answer; `model` is the id the client sent. */
export function embeddingsAnswer(model: string, vectors: readonly (readonly number[] | string)[], encoding: EmbeddingEncoding, promptTokens: number): Buffer {
  const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeVector(vector, encoding) }));
  return jsonBytes({ object: 'list', data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
}
