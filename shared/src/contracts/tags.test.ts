import { describe, expect, it } from 'vitest';
import { decodeKeyRecord, encodeKeyRecord } from './key-record.js';
import { ContractError } from './version.js';
import { endUserOf, MAX_END_USER, splitTag, tagProblem, tagsProblem } from './tags.js';

describe('tags', () => {
  it('accepts keys and values of the documented alphabets and lengths', () => {
    expect(tagProblem('team', 'search')).toBeNull();
    expect(tagProblem('a.b_c-9', 'V:1.2_x-Y')).toBeNull();
    expect(tagProblem('k'.repeat(32), 'v'.repeat(64))).toBeNull();
  });

  it('names the tag that breaks a rule', () => {
    expect(tagProblem('Team', 'x')).toMatch(/`Team`/);
    expect(tagProblem('k'.repeat(33), 'x')).toMatch(/1-32/);
    expect(tagProblem('team', 'a b')).toMatch(/tag `team` has value `a b`/);
    expect(tagProblem('team', '')).toMatch(/1-64/);
    expect(tagProblem('team', 'v'.repeat(65))).toMatch(/1-64/);
  });

  it('splits a pair at its first equals sign', () => {
    expect(splitTag('team=search')).toEqual(['team', 'search']);
    expect(splitTag('a=b=c')).toEqual(['a', 'b=c']);
    expect(splitTag('=x')).toBeNull();
    expect(splitTag('novalue')).toBeNull();
  });

  it('checks an object of tags: count, value types, each pair', () => {
    expect(tagsProblem({ team: 'search', feature: 'rag' })).toBeNull();
    expect(tagsProblem(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])))).toMatch(/at most 10/);
    expect(tagsProblem({ team: 3 })).toMatch(/string value/);
    expect(tagsProblem({ TEAM: 'x' })).toMatch(/`TEAM`/);
  });

  it('cuts an end user at 128 characters without splitting a surrogate pair', () => {
    expect(endUserOf('')).toBeNull();
    expect(endUserOf('alice')).toBe('alice');
    expect(endUserOf('u'.repeat(200))).toBe('u'.repeat(MAX_END_USER));
    const emojiAtCut = 'u'.repeat(MAX_END_USER - 1) + '😀';
    expect(endUserOf(emojiAtCut)).toBe('u'.repeat(MAX_END_USER - 1));
  });
});

describe('key record tags', () => {
  it('round-trips default tags and leaves an untagged record as it was', () => {
    const tagged = encodeKeyRecord({ id: 'k', project_id: 'p', expires_at: null, tags: { team: 'search' } });
    expect(decodeKeyRecord(tagged)).toEqual({ v: 1, id: 'k', project_id: 'p', expires_at: null, tags: { team: 'search' } });
    const plain = encodeKeyRecord({ id: 'k', project_id: 'p', expires_at: null, tags: {} });
    expect(plain).toBe('{"v":1,"id":"k","project_id":"p","expires_at":null}');
    expect(decodeKeyRecord(plain)).not.toHaveProperty('tags');
  });

  it('refuses a record whose tags break the rules', () => {
    expect(() => decodeKeyRecord('{"v":1,"id":"k","project_id":"p","expires_at":null,"tags":{"Bad":"x"}}')).toThrow(ContractError);
    expect(() => decodeKeyRecord('{"v":1,"id":"k","project_id":"p","expires_at":null,"tags":["x"]}')).toThrow(ContractError);
  });
});
