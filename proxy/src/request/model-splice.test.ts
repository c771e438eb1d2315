import { describe, expect, it } from 'vitest';
import { spliceModel } from './model-splice.js';

const splice = (body: string, current: string, model: string) => spliceModel(Buffer.from(body), current, model)?.toString() ?? null;

describe('spliceModel', () => {
  it("renames the top-level model in the client's bytes, leaving every other byte as it came", () => {
    const body = '{ "max_tokens" : 5,\n  "model" :  "claude-x", "messages":[{"role":"user","content":"say \\"model\\": no"}], "x_new": {"a": 1.50}}';
    const out = splice(body, 'claude-x', 'anthropic.claude-x-v1:0');
    expect(out).toBe(body.replace('"claude-x"', '"anthropic.claude-x-v1:0"'));
    expect(JSON.parse(out!)).toEqual({ ...JSON.parse(body), model: 'anthropic.claude-x-v1:0' });
  });

  it('gives the bytes themselves when the model is the same', () => {
    const raw = Buffer.from('{"model":"a"}');
    expect(spliceModel(raw, 'a', 'a')).toBe(raw);
  });

  it('writes the new id as JSON, and reads the old one with its escapes', () => {
    expect(splice('{"model":"a\\u0062"}', 'ab', 'quo"te')).toBe('{"model":"quo\\"te"}');
  });

  it('declines when the key is not found exactly once outside a string, or holds something else', () => {
    // A tool schema with a property named model: which one is top-level is not known from bytes alone.
    expect(splice('{"tools":[{"input_schema":{"properties":{"model":{"type":"string"}}}}],"model":"m"}', 'm', 'n')).toBeNull();
    expect(splice('{"model":"m","model":"m"}', 'm', 'n')).toBeNull();
    expect(splice('{"model":5}', 'm', 'n')).toBeNull();
    expect(splice('{"meta":{"model":"other"}}', 'm', 'n')).toBeNull();
    // A string ending in `model` is no key.
    expect(splice('{"note":"a \\"model","model":"m"}', 'm', 'n')).toBe('{"note":"a \\"model","model":"n"}');
  });
});
