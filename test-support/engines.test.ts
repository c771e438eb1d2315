import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './processes.js';

/**
 * `npm ci` on the Node version the README states prints no EBADENGINE warning: every package the
 * lock file installs accepts the lowest Node our own `engines` allows (a dependency that requires
 * Node 22 would warn on every install, and may use what Node 20 lacks).
 */
const manifest = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(`${ROOT}/package-lock.json`, 'utf8')) as { packages: Record<string, { version?: string; engines?: unknown; dev?: boolean; optional?: boolean }> };

describe('the install', () => {
  it('holds only packages whose engines accept the Node version the README states', () => {
    const lowest = semver.minVersion(manifest.engines.node)?.version;
    expect(lowest).toBeDefined();
    expect(readFileSync(`${ROOT}/README.md`, 'utf8')).toContain(`Needs Node ${semver.major(lowest as string)}`);
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && typeof entry.engines === 'object' && entry.engines !== null && typeof (entry.engines as { node?: unknown }).node === 'string')
      .filter(([, entry]) => !semver.satisfies(lowest as string, (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path}@${entry.version}: node ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });
});
