import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { mergeTags, parseTagsHeader } from './tags-header.js';

function refusal(header: string): GatewayError {
  try {
    parseTagsHeader(header);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error(`accepted ${header}`);
}

describe('x-gateway-tags', () => {
  it('reads comma-separated pairs, spaces around them ignored', () => {
    expect({ ...parseTagsHeader('team=search, feature=rag ,') }).toEqual({ team: 'search', feature: 'rag' });
    expect(parseTagsHeader('')).toBeNull();
    expect(parseTagsHeader(' , ')).toBeNull();
  });

  it('keeps the last value of a key named twice, counted once', () => {
    const header = ['a=1', ...Array.from({ length: 9 }, (_, i) => `k${i}=v`), 'a=2'].join(',');
    expect(parseTagsHeader(header)?.a).toBe('2');
  });

  it('takes prototype names as ordinary keys', () => {
    const tags = parseTagsHeader('__proto__=x,constructor=y');
    expect(Object.keys(tags ?? {})).toEqual(['__proto__', 'constructor']);
    expect(JSON.stringify(tags)).toBe('{"__proto__":"x","constructor":"y"}');
  });

  it('refuses what breaks the rules with a 400 naming the tag', () => {
    for (const [header, named] of [
      ['team', '`team`'],
      ['=x', '`=x`'],
      ['Team=x', '`Team`'],
      ['team=a b', 'tag `team`'],
      ['team=', 'tag `team`'],
      ['team=' + 'v'.repeat(65), 'tag `team`'],
      ['k'.repeat(33) + '=v', '`' + 'k'.repeat(33) + '`'],
    ] as const) {
      const err = refusal(header);
      expect(err.status).toBe(400);
      expect(err.code).toBe('INVALID_REQUEST');
      expect(err.param).toBe('x-gateway-tags');
      expect(err.message).toContain(named);
    }
  });

  it('refuses more than 10 pairs', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `k${i}=v`);
    expect(Object.keys(parseTagsHeader(ten.join(',')) ?? {})).toHaveLength(10);
    expect(refusal([...ten, 'k10=v'].join(',')).message).toMatch(/at most 10/);
  });
});

describe('mergeTags', () => {
  it('lets a request tag win over the key default of the same key', () => {
    expect(mergeTags({ team: 'search', env: 'prod' }, { team: 'ads' })).toEqual({ team: 'ads', env: 'prod' });
  });

  it('returns either side as it is when the other is empty', () => {
    const defaults = { team: 'search' };
    expect(mergeTags(defaults, null)).toBe(defaults);
    const request = { team: 'ads' };
    expect(mergeTags(null, request)).toBe(request);
    expect(mergeTags(null, null)).toBeNull();
  });
});
