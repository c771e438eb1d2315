import { describe, expect, it } from 'vitest';
import { loadUws, uwsBinding, UWS_CANDIDATES, UwsLoadError } from './uws.js';

describe('uWebSockets.js loader', () => {
  it('loads the native binding on this platform', () => {
    const uws = loadUws();
    expect(typeof uws.App).toBe('function');
  });

  it('names the binding it loaded: one of the candidates, its version and the binary for this Node', () => {
    const binding = uwsBinding();
    expect(UWS_CANDIDATES.map((c) => c.pkg)).toContain(binding.pkg);
    expect(binding.version).toMatch(/^\d+\.\d+/);
    expect(binding.binary).toBe(`uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  });

  it('finds a package whose exports map hides its package.json', () => {
    // @btc-vision/uwebsockets.js exports only its entry points; on a C library too old for its
    // binaries it is found and refused with the loader's reason, not called "not installed".
    let message = '';
    try {
      loadUws([{ pkg: '@btc-vision/uwebsockets.js', dir: 'no-such-dir' }]);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('@btc-vision/uwebsockets.js: Cannot find module');
  });

  it('refuses, saying why, when no native binding loads (never a JavaScript fallback)', () => {
    expect(() => loadUws([{ pkg: 'uws-package-that-is-not-installed', dir: '' }])).toThrow(UwsLoadError);
    expect(() => loadUws([{ pkg: 'uws-package-that-is-not-installed', dir: '' }])).toThrow(/refuses to run on a JavaScript fallback.*not installed/);
    // A package that exists but ships no binary for this ABI.
    expect(() => loadUws([{ pkg: '@trufflesuite/uws-js-unofficial', dir: 'no-such-dir' }])).toThrow(/Cannot find module/);
  });
});
