import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EntryNames, requestHash } from './cache-key.js';

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

describe('EntryNames', () => {
  const asked = (body: unknown, text = JSON.stringify(body)): [Buffer, unknown] => [Buffer.from(text), JSON.parse(text)];
  const nameOf = (projectId: string, endpoint: string, hash: string) => `${projectId}/${endpoint}/${hash}`;

  it('names an entry by project, endpoint and requestHash, for bytes seen before and new ones alike', () => {
    const names = new EntryNames(nameOf);
    const body = { model: 'm', messages: [{ role: 'user', content: 'héllo 👋' }] };
    const hash = requestHash(body);
    const [raw, parsed] = asked(body);
    expect(names.of('p1', 'chat.completions', parsed, raw)).toBe(`p1/chat.completions/${hash}`);
    expect(names.of('p1', 'chat.completions', parsed, Buffer.from(raw))).toBe(`p1/chat.completions/${hash}`);
    // The same bytes from another project or endpoint: their own name.
    expect(names.of('p2', 'chat.completions', parsed, raw)).toBe(`p2/chat.completions/${hash}`);
    expect(names.of('p2', 'responses', parsed, raw)).toBe(`p2/responses/${hash}`);
    expect(names.of('p1', 'chat.completions', parsed, raw)).toBe(`p1/chat.completions/${hash}`);
    // Other bytes, the same question: the same name; another question: another.
    const [spaced, spacedParsed] = asked(body, JSON.stringify(body, null, 2));
    expect(names.of('p1', 'chat.completions', spacedParsed, spaced)).toBe(`p1/chat.completions/${hash}`);
    const [other, otherParsed] = asked({ ...body, model: 'n' });
    expect(names.of('p1', 'chat.completions', otherParsed, other)).not.toBe(`p1/chat.completions/${hash}`);
  });

  it('stays right without bytes, past its per-body bound and past its total bound', () => {
    const names = new EntryNames(nameOf);
    const body = { model: 'm', input: 'x'.repeat(20_000) };
    expect(names.of('p', 'e', body, null)).toBe(`p/e/${requestHash(body)}`);
    const [big, bigParsed] = asked(body);
    expect(names.of('p', 'e', bigParsed, big)).toBe(`p/e/${requestHash(body)}`);
    // 1,000 bodies of ~10 KB: more than the memo holds, so it starts again on the way.
    for (let i = 0; i < 1_000; i++) {
      const question = { model: 'm', input: `${i} ${'y'.repeat(10_000)}` };
      const [raw, parsed] = asked(question);
      expect(names.of('p', 'e', parsed, raw)).toBe(`p/e/${requestHash(question)}`);
      expect(names.of('p', 'e', parsed, raw)).toBe(`p/e/${requestHash(question)}`);
    }
  });

  it('gives a kept parse back for the same bytes to the same project and endpoint only', () => {
    const names = new EntryNames(nameOf);
    const body = { model: 'm', messages: [{ role: 'user', content: 'again' }] };
    const [raw, json] = asked(body);
    const parse = { json, parsed: null, embeddings: null };
    // Nothing to give before a parse is kept, nor for bytes never named.
    expect(names.recall('p1', 'chat.completions', raw)).toBeNull();
    names.keep('p1', 'chat.completions', raw, parse);
    expect(names.recall('p1', 'chat.completions', raw)).toBeNull();
    const name = names.of('p1', 'chat.completions', json, raw);
    expect(names.recall('p1', 'chat.completions', raw)).toBeNull();
    names.keep('p1', 'chat.completions', raw, parse);
    expect(names.recall('p1', 'chat.completions', Buffer.from(raw))).toMatchObject({ name, parse });
    expect(names.recall('p1', 'chat.completions', raw)?.parse).toBe(parse);
    expect(names.recall('p2', 'chat.completions', raw)).toBeNull();
    expect(names.recall('p1', 'responses', raw)).toBeNull();
    // Other bytes of the same question: named alike, but never given this parse.
    const [spaced] = asked(body, JSON.stringify(body, null, 2));
    expect(names.recall('p1', 'chat.completions', spaced)).toBeNull();
    // Named for another endpoint, which parses the bytes its own way: the parse is dropped.
    names.of('p1', 'responses', json, raw);
    names.of('p1', 'chat.completions', json, raw);
    expect(names.recall('p1', 'chat.completions', raw)).toBeNull();
  });

  it('keeps no parse of a body over its per-body bound, and drops kept parses with the memo', () => {
    const names = new EntryNames(nameOf);
    const [big, bigJson] = asked({ model: 'm', input: 'x'.repeat(20_000) });
    names.of('p', 'e', bigJson, big);
    names.keep('p', 'e', big, { json: bigJson, parsed: null, embeddings: null });
    expect(names.recall('p', 'e', big)).toBeNull();
    const [raw, json] = asked({ model: 'm', input: 'kept' });
    names.of('p', 'e', json, raw);
    names.keep('p', 'e', raw, { json, parsed: null, embeddings: null });
    expect(names.recall('p', 'e', raw)).not.toBeNull();
    for (let i = 0; i < 1_000; i++) {
      const [other, otherJson] = asked({ model: 'm', input: `${i} ${'y'.repeat(10_000)}` });
      names.of('p', 'e', otherJson, other);
    }
    expect(names.recall('p', 'e', raw)).toBeNull();
  });

  it("counts the pool memory a kept parse's small body holds", () => {
    const names = new EntryNames(nameOf);
    const bodies = Array.from({ length: 2_000 }, (_, i) => {
      // Buffer.from copies a small string into a slice of the shared 8 KiB pool, as the body reader does.
      const raw = Buffer.from(JSON.stringify({ model: 'm', input: `question ${i}` }));
      const json = JSON.parse(raw.toString()) as unknown;
      names.of('p', 'e', json, raw);
      names.keep('p', 'e', raw, { json, parsed: null, embeddings: null });
      return raw;
    });
    expect(bodies[0]!.buffer.byteLength).toBeGreaterThan(bodies[0]!.length);
    const kept = bodies.filter((raw) => names.recall('p', 'e', raw) !== null).length;
    // 4 MiB at one slab each, at most; the first ones are kept.
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual((4 * 1024 * 1024) / 8192);
    expect(names.recall('p', 'e', bodies[0]!)).not.toBeNull();
  });
});
