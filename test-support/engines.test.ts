import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './processes.js';

/**
 * `npm ci` on the Node version the README states prints no EBADENGINE warning: every package the
 * lock file installs accepts the lowest Node our own `engines` allows (a dependency that requires
 * Node 22 would warn on every install, and may use what Node 20 lacks), but for OWN_RUNTIME.
 */
const manifest = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(`${ROOT}/package-lock.json`, 'utf8')) as { packages: Record<string, { version?: string; engines?: unknown; dev?: boolean; optional?: boolean }> };

/** The lowest release of each Node line our `engines` names (20.19.0, 22.13.0, 24.0.0). */
function lineFloors(range: string): string[] {
  return range.split('||').map((part) => semver.minVersion(part.trim())?.version as string);
}

describe('the install', () => {
  it('holds only packages whose engines accept the Node version the README states', () => {
    const lowest = semver.minVersion(manifest.engines.node)?.version;
    expect(lowest).toBeDefined();
    expect(readFileSync(`${ROOT}/README.md`, 'utf8')).toContain(`Needs Node ${semver.major(lowest as string)}`);
    expect(refusing(lowest as string)).toEqual([]);
  });

  it('supports Node 20, 22 and 24, and every package accepts the first release of each line', () => {
    const floors = lineFloors(manifest.engines.node);
    expect(floors.map((v) => semver.major(v))).toEqual([20, 22, 24]);
    // Not an odd (short-lived) line, nor one no test has run on.
    expect(semver.satisfies('25.0.0', manifest.engines.node)).toBe(false);
    expect(semver.satisfies('18.20.0', manifest.engines.node)).toBe(false);
    for (const floor of floors) expect(refusing(floor), `Node ${floor}`).toEqual([]);
  });
});

/**
 * Development-only packages that bring their own runtime: the Claude Code CLI is a native binary
 * (its platform package, run directly by the tests) whose npm wrapper asks for Node 22 only for an
 * install script this project does not run (allowScripts).
 */
const OWN_RUNTIME = new Set(['node_modules/@anthropic-ai/claude-code']);

function refusing(version: string): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => !(OWN_RUNTIME.has(path) && entry.dev === true))
    .filter(([path, entry]) => path !== '' && typeof entry.engines === 'object' && entry.engines !== null && typeof (entry.engines as { node?: unknown }).node === 'string')
    .filter(([, entry]) => !semver.satisfies(version, (entry.engines as { node: string }).node))
    .map(([path, entry]) => `${path}@${entry.version}: node ${(entry.engines as { node: string }).node}`);
}
