import { describe, expect, it } from 'vitest';
import { loadUws, UwsLoadError } from './uws.js';

describe('uWebSockets.js loader', () => {
  it('loads the native binding on this platform', () => {
    const uws = loadUws();
    expect(typeof uws.App).toBe('function');
  });

  it('refuses, saying why, when no native binding loads (never a JavaScript fallback)', () => {
    expect(() => loadUws([{ pkg: 'uws-package-that-is-not-installed', dir: '' }])).toThrow(UwsLoadError);
    expect(() => loadUws([{ pkg: 'uws-package-that-is-not-installed', dir: '' }])).toThrow(/refuses to run on a JavaScript fallback.*not installed/);
    // A package that exists but ships no binary for this ABI.
    expect(() => loadUws([{ pkg: '@trufflesuite/uws-js-unofficial', dir: 'no-such-dir' }])).toThrow(/Cannot find module/);
  });
});
