import { describe, expect, it } from 'vitest';
import { GatewayError } from '@gateway/shared';
import { MAX_EMBEDDING_INPUTS, validateEmbeddingsRequest } from './validate-embeddings.js';

function refusal(body: unknown): { param: string | null; message: string } {
  try {
    validateEmbeddingsRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_REQUEST');
    return err as GatewayError;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

const many = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`);

describe('validateEmbeddingsRequest', () => {
  it('accepts a string, strings, token ids and token-id arrays, with every documented field and unknown ones', () => {
    for (const input of ['hello', ['a', 'b'], [1, 2, 3], [[1, 2], [3]], many(MAX_EMBEDDING_INPUTS), [0]]) {
      const body = { model: 'm', input, encoding_format: 'base64', dimensions: 256, user: 'u', extra: { kept: true } };
      expect(validateEmbeddingsRequest(body)).toBe(body);
    }
    expect(validateEmbeddingsRequest({ model: 'm', input: 'x', encoding_format: null, dimensions: null, user: null })).toBeTruthy();
    // One text as token ids: its length is a token count, not a number of inputs.
    expect(validateEmbeddingsRequest({ model: 'm', input: Array.from({ length: 5000 }, (_, i) => i) })).toBeTruthy();
  });

  it('refuses a body that is not an object, and a missing or bad model', () => {
    for (const body of [null, [], 'x', 3]) expect(refusal(body).param).toBe('body');
    expect(refusal({ input: 'x' }).param).toBe('model');
    expect(refusal({ model: '', input: 'x' }).param).toBe('model');
    expect(refusal({ model: 7, input: 'x' }).param).toBe('model');
    expect(refusal({ model: 'm'.repeat(257), input: 'x' }).param).toBe('model');
  });

  it('refuses empty input, too many inputs and wrong types, naming the field or the item', () => {
    expect(refusal({ model: 'm' }).param).toBe('input');
    expect(refusal({ model: 'm', input: null }).param).toBe('input');
    expect(refusal({ model: 'm', input: '' }).param).toBe('input');
    expect(refusal({ model: 'm', input: [] }).param).toBe('input');
    const tooMany = refusal({ model: 'm', input: many(MAX_EMBEDDING_INPUTS + 1) });
    expect(tooMany.param).toBe('input');
    expect(tooMany.message).toContain('at most 2048');
    expect(refusal({ model: 'm', input: 42 }).param).toBe('input');
    expect(refusal({ model: 'm', input: { text: 'x' } }).param).toBe('input');
    expect(refusal({ model: 'm', input: ['a', ''] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: ['a', 3] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [1, 'a'] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [1, -1] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [1.5] }).param).toBe('input[0]');
    expect(refusal({ model: 'm', input: [[1], []] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [[1], ['a']] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [[1], 2] }).param).toBe('input[1]');
    expect(refusal({ model: 'm', input: [null] }).param).toBe('input[0]');
    expect(refusal({ model: 'm', input: [{}] }).param).toBe('input[0]');
  });

  it('refuses a bad encoding_format, dimensions or user', () => {
    expect(refusal({ model: 'm', input: 'x', encoding_format: 'int8' }).param).toBe('encoding_format');
    for (const dimensions of [0, -3, 1.5, '256']) expect(refusal({ model: 'm', input: 'x', dimensions }).param).toBe('dimensions');
    expect(refusal({ model: 'm', input: 'x', user: 12 }).param).toBe('user');
  });
});
