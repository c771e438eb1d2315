import { describe, expect, it } from 'vitest';
import { cacheDirectives } from './cache-control.js';

describe('cacheDirectives', () => {
  it('reads and writes without a header', () => {
    expect(cacheDirectives('')).toEqual({ read: true, write: true, maxAgeMs: null });
  });
  it('no-store reads and writes nothing; no-cache writes only', () => {
    expect(cacheDirectives('no-store')).toEqual({ read: false, write: false, maxAgeMs: null });
    expect(cacheDirectives('No-Cache')).toEqual({ read: false, write: true, maxAgeMs: null });
    expect(cacheDirectives('no-cache, no-store')).toEqual({ read: false, write: false, maxAgeMs: null });
  });
  it('max-age bounds the age accepted; the smallest wins; a malformed one is ignored', () => {
    expect(cacheDirectives('max-age=30')).toEqual({ read: true, write: true, maxAgeMs: 30_000 });
    expect(cacheDirectives('max-age=30, max-age=0')).toEqual({ read: true, write: true, maxAgeMs: 0 });
    expect(cacheDirectives('max-age=abc, private')).toEqual({ read: true, write: true, maxAgeMs: null });
  });
});
