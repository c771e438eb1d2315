import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** Every environment variable any service reads appears in the README's configuration table. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCES = ['shared/src', 'proxy/src', 'control-plane/src', 'deploy'];
const READ = /env(?:String|Int|Bool|Port|Url|Optional)\(env, '([A-Z][A-Z0-9_]+)'|\benv\.([A-Z][A-Z0-9_]{2,})\b|process\.env\.([A-Z][A-Z0-9_]{2,})\b/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : files(path);
    return /\.(ts|js)$/.test(name) && !/\.test\.ts$|\.case\.ts$/.test(name) ? [path] : [];
  });
}

function variablesRead(): Set<string> {
  const found = new Set<string>();
  for (const dir of SOURCES) {
    for (const file of files(join(ROOT, dir))) {
      for (const m of readFileSync(file, 'utf8').matchAll(READ)) found.add((m[1] ?? m[2] ?? m[3]) as string);
    }
  }
  return found;
}

function variablesDocumented(): Set<string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? '';
  return new Set([...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1] as string));
}

describe('configuration table', () => {
  it('documents every variable the services read, and only those', () => {
    expect([...variablesDocumented()].sort()).toEqual([...variablesRead()].sort());
  });
});
