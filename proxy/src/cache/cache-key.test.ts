import { describe, expect, it } from 'vitest';
import { requestHash } from './cache-key.js';

describe('requestHash', () => {
  const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };
  it('ignores key order, number spelling and the delivery fields', () => {
    const same = { temperature: 0.50, messages: [{ content: 'hi', role: 'user' }], model: 'm', stream: true, stream_options: { include_usage: true }, user: 'u1', metadata: { a: 1 } };
    expect(requestHash(same)).toBe(requestHash(base));
  });
  it('tells apart any other difference', () => {
    expect(requestHash({ ...base, temperature: 0.6 })).not.toBe(requestHash(base));
    expect(requestHash({ ...base, messages: [{ role: 'user', content: 'hi ' }] })).not.toBe(requestHash(base));
    expect(requestHash({ ...base, n: 1 })).not.toBe(requestHash(base));
  });
});
