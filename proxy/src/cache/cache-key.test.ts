import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { QuestionHashes, requestHash } from './cache-key.js';

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
  it('is the SHA-256 of the RFC 8785 form, base64url', () => {
    const canonical = '{"messages":[{"content":"hi","role":"user"}],"model":"m","temperature":0.5}';
    expect(requestHash(base)).toBe(createHash('sha256').update(canonical).digest('base64url'));
  });
});

describe('QuestionHashes', () => {
  const asked = (body: unknown, text = JSON.stringify(body)): [Buffer, unknown] => [Buffer.from(text), JSON.parse(text)];

  it('gives requestHash, for bytes seen before and new ones alike', () => {
    const hashes = new QuestionHashes();
    const body = { model: 'm', messages: [{ role: 'user', content: 'héllo 👋' }] };
    const [raw, parsed] = asked(body);
    expect(hashes.of(raw, parsed)).toBe(requestHash(body));
    expect(hashes.of(Buffer.from(raw), parsed)).toBe(requestHash(body));
    // Other bytes, the same question: the same hash; another question: another.
    const [spaced, spacedParsed] = asked(body, JSON.stringify(body, null, 2));
    expect(hashes.of(spaced, spacedParsed)).toBe(requestHash(body));
    const [other, otherParsed] = asked({ ...body, model: 'n' });
    expect(hashes.of(other, otherParsed)).not.toBe(requestHash(body));
  });

  it('stays right without bytes, past its per-body bound and past its total bound', () => {
    const hashes = new QuestionHashes();
    const body = { model: 'm', input: 'x'.repeat(20_000) };
    expect(hashes.of(null, body)).toBe(requestHash(body));
    const [big, bigParsed] = asked(body);
    expect(hashes.of(big, bigParsed)).toBe(requestHash(body));
    // 1,000 bodies of ~10 KB: more than the memo holds, so it starts again on the way.
    for (let i = 0; i < 1_000; i++) {
      const question = { model: 'm', input: `${i} ${'y'.repeat(10_000)}` };
      const [raw, parsed] = asked(question);
      expect(hashes.of(raw, parsed)).toBe(requestHash(question));
      expect(hashes.of(raw, parsed)).toBe(requestHash(question));
    }
  });
});
