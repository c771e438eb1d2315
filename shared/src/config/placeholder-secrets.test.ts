import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadControlPlaneConfig, loadProxyConfig, loadWriterConfig } from './service-config.js';

/**
 * The placeholder values this repository publishes (the production example's CHANGE-ME…, the
 * development overlay's dev-only-placeholder…) protect nothing: under NODE_ENV=production every
 * service refuses to start with one, naming the variable and never the value.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** `KEY: value` lines of the example Secret and `- KEY=value` literals of the dev overlay. */
function published(): Record<string, string>[] {
  const example = readFileSync(`${ROOT}deploy/kubernetes/overlays/production/secret.example.yaml`, 'utf8');
  const dev = readFileSync(`${ROOT}deploy/kubernetes/overlays/dev/kustomization.yaml`, 'utf8');
  const fromExample = [...example.matchAll(/^ {2}([A-Z][A-Z0-9_]+): (\S+)$/gm)].map((m) => ({ [m[1] as string]: m[2] as string }));
  const fromDev = [...dev.matchAll(/^ +- ([A-Z][A-Z0-9_]+)=(\S+)$/gm)].map((m) => ({ [m[1] as string]: m[2] as string }));
  return [...fromExample, ...fromDev].filter((v) => /CHANGE-ME|placeholder/.test(Object.values(v)[0] as string));
}

describe('placeholder secrets', () => {
  it('are found in the published examples (the list below is not empty)', () => {
    const names = published().map((v) => Object.keys(v)[0]);
    expect(names).toEqual(expect.arrayContaining(['JWT_SECRET', 'INTERNAL_TOKEN', 'DATABASE_URL', 'ADMIN_PASSWORD', 'OPENAI_API_KEY']));
  });

  it.each(published())('%o is refused under NODE_ENV=production by every service, naming the variable only', (variable) => {
    const [name, value] = Object.entries(variable)[0] as [string, string];
    for (const load of [loadControlPlaneConfig, loadProxyConfig, loadWriterConfig]) {
      let error: unknown;
      try {
        load({ NODE_ENV: 'production', [name]: value });
      } catch (err) {
        error = err;
      }
      expect(error, `${load.name} with ${name}`).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(new RegExp(`^${name} holds a placeholder value`));
      expect((error as Error).message).not.toContain(value);
    }
  });

  it('are accepted outside production, and real secrets are accepted in production', () => {
    expect(() => loadControlPlaneConfig({ JWT_SECRET: 'CHANGE-ME-at-least-32-random-bytes' })).not.toThrow();
    expect(() =>
      loadControlPlaneConfig({ NODE_ENV: 'production', JWT_SECRET: 'b1946ac92492d2347c6235b4d2611184b1946ac92492d2347c', DATABASE_URL: 'postgres://gw:s3cret@db:5432/gw' }),
    ).not.toThrow();
    // A word that merely contains the letters is no placeholder.
    expect(() => loadControlPlaneConfig({ NODE_ENV: 'production', REDIS_URL: 'redis://exchange-media:6379' })).not.toThrow();
  });

  it('are all named at once', () => {
    expect(() => loadProxyConfig({ NODE_ENV: 'production', INTERNAL_TOKEN: 'change-me', OPENAI_API_KEY: 'CHANGE-ME' })).toThrow(/^INTERNAL_TOKEN, OPENAI_API_KEY hold a placeholder value/);
  });
});
