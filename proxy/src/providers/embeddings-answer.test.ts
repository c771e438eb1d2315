import { describe, expect, it } from 'vitest';
import { base64ToFloats, embeddingInputs, embeddingsAnswer, floatsToBase64 } from './embeddings-answer.js';

describe('embeddings answer', () => {
  it("encodes a vector as OpenAI does: float32 little endian in base64, and decodes it back", () => {
    expect(floatsToBase64([1, -2, 0.5])).toBe(Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f]).toString('base64'));
    expect(base64ToFloats(floatsToBase64([0.25, -0.125, 3]))).toEqual([0.25, -0.125, 3]);
    // Values are rounded to float32, as OpenAI's base64 carries them.
    expect(base64ToFloats(floatsToBase64([0.1]))).toEqual([Math.fround(0.1)]);
  });

  it('classifies the input', () => {
    expect(embeddingInputs('x')).toEqual({ kind: 'text', texts: ['x'] });
    expect(embeddingInputs(['x', 'y'])).toEqual({ kind: 'text', texts: ['x', 'y'] });
    expect(embeddingInputs([1, 2])).toEqual({ kind: 'tokens', ids: [[1, 2]] });
    expect(embeddingInputs([[1], [2, 3]])).toEqual({ kind: 'tokens', ids: [[1], [2, 3]] });
  });

  it("builds OpenAI's answer in the asked encoding, whatever the provider gave", () => {
    const base64 = floatsToBase64([0.5, 0.25]);
    const asFloats = JSON.parse(embeddingsAnswer('m', [[0.5, 0.25], base64], 'float', 7).toString());
    expect(asFloats).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, 0.25] },
        { object: 'embedding', index: 1, embedding: [0.5, 0.25] },
      ],
      model: 'm',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    const asBase64 = JSON.parse(embeddingsAnswer('m', [[0.5, 0.25], base64], 'base64', 7).toString());
    expect(asBase64.data.map((d: { embedding: string }) => d.embedding)).toEqual([base64, base64]);
  });
});
