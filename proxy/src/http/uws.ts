import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

/**
 * Loads a native uWebSockets.js binding, or refuses. The republished packages fall back to a slow
 * JavaScript imitation when their binary does not load; a gateway running on that would be a
 * silent 10x regression, so this module loads the .node file itself and throws instead.
 *
 * Two republished builds cover the supported Node lines: `@btc-vision/uwebsockets.js` (upstream
 * v20.57, binaries for Node 20 to 25, built against glibc 2.38) and
 * `@trufflesuite/uws-js-unofficial` (v20.30, Node 20 only, loads on glibc 2.36). The newer one is
 * tried first and the older one takes over where the C library is too old for it. Every part of
 * the proxy that touches the binding goes through this folder, and what it uses is the API both
 * builds share (their types are the older build's).
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

/** Packages tried in order; each ships binaries named uws_<platform>_<arch>_<abi>.node in `dir`. */
export const UWS_CANDIDATES: readonly { pkg: string; dir: string }[] = [
  { pkg: 'uWebSockets.js', dir: '' },
  { pkg: '@btc-vision/uwebsockets.js', dir: '' },
  { pkg: '@trufflesuite/uws-js-unofficial', dir: 'binaries' },
];

/** Which binding loaded: its package, the package's version and the binary file (start-up logs name them). */
export interface UwsBinding {
  pkg: string;
  version: string;
  binary: string;
}

let loaded: { mod: UwsModule; binding: UwsBinding } | undefined;

/**
 * A package's folder, found on the resolver's own search path. Not through `<pkg>/package.json`:
 * a package whose `exports` map leaves package.json out cannot be resolved that way, and its main
 * file may not be loadable here (that is what is being found out).
 */
function packageRoot(pkg: string): string | null {
  for (const dir of require.resolve.paths(pkg) ?? []) {
    const root = join(dir, pkg);
    if (existsSync(join(root, 'package.json'))) return root;
  }
  return null;
}

function versionOf(root: string): string {
  try {
    return String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

export function loadUws(candidates = UWS_CANDIDATES): UwsModule {
  if (loaded && candidates === UWS_CANDIDATES) return loaded.mod;
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const tried: string[] = [];
  for (const { pkg, dir } of candidates) {
    const root = packageRoot(pkg);
    if (root === null) {
      tried.push(`${pkg}: not installed`);
      continue;
    }
    const file = join(root, dir, binary);
    try {
      const mod = require(file) as UwsModule;
      if (typeof mod.App !== 'function') throw new Error('binding has no App()');
      if (candidates === UWS_CANDIDATES) loaded = { mod, binding: { pkg, version: versionOf(root), binary } };
      return mod;
    } catch (err) {
      tried.push(`${pkg}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new UwsLoadError(
    `No native uWebSockets.js binding loads on Node ${process.version} (${process.platform}-${process.arch}, ABI ${process.versions.modules}). ` +
      `The proxy refuses to run on a JavaScript fallback. Tried: ${tried.join('; ')}. ` +
      'Use Node 20, 22 or 24 on Linux, macOS or Windows (x64 or arm64; glibc 2.38 or newer on Linux, or Node 20 with glibc 2.36) ' +
      'with the proxy dependencies installed, or install uWebSockets.js for this platform.',
  );
}

/** The binding loadUws() loaded for the proxy (it loads one first if none was). */
export function uwsBinding(): UwsBinding {
  loadUws();
  return loaded!.binding;
}
