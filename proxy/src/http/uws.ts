import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

/**
 * Loads a native uWebSockets.js binding, or refuses. The republished packages fall back to a slow
 * JavaScript imitation when their binary does not load; a gateway running on that would be a
 * silent 10x regression, so this module loads the .node file itself and throws instead.
 */
export type UwsModule = typeof Uws;
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

export class UwsLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UwsLoadError';
  }
}

const require = createRequire(import.meta.url);

/** Packages tried in order; each ships binaries named uws_<platform>_<arch>_<abi>.node. */
export const UWS_CANDIDATES: readonly { pkg: string; dir: string }[] = [
  { pkg: 'uWebSockets.js', dir: '' },
  { pkg: '@trufflesuite/uws-js-unofficial', dir: 'binaries' },
];

let loaded: UwsModule | undefined;

export function loadUws(candidates = UWS_CANDIDATES): UwsModule {
  if (loaded && candidates === UWS_CANDIDATES) return loaded;
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const tried: string[] = [];
  for (const { pkg, dir } of candidates) {
    let root: string;
    try {
      root = dirname(require.resolve(`${pkg}/package.json`));
    } catch {
      tried.push(`${pkg}: not installed`);
      continue;
    }
    const file = join(root, dir, binary);
    try {
      const mod = require(file) as UwsModule;
      if (typeof mod.App !== 'function') throw new Error('binding has no App()');
      if (candidates === UWS_CANDIDATES) loaded = mod;
      return mod;
    } catch (err) {
      tried.push(`${pkg}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new UwsLoadError(
    `No native uWebSockets.js binding loads on Node ${process.version} (${process.platform}-${process.arch}, ABI ${process.versions.modules}). ` +
      `The proxy refuses to run on a JavaScript fallback. Tried: ${tried.join('; ')}. ` +
      'Use Node 20 on Linux x64 with @trufflesuite/uws-js-unofficial installed, or install uWebSockets.js for this platform.',
  );
}
