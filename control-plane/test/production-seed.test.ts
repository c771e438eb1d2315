import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '@gateway/shared';
import { startControlPlane } from '../src/control-plane.js';
import { printSeedBanner } from '../src/seed-banner.js';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix, type TestDatabase } from '../../test-support/databases.js';
import { exitCode, spawnNode } from '../../test-support/processes.js';
import { clearPrefix } from '../../test-support/redis.js';

/** The first start with NODE_ENV=production: no demo, and the generated admin password in a 0600 file. */
const prefix = testRedisPrefix('prodseed');
const redis = new Redis(TEST_REDIS_URL);
const databases: TestDatabase[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-prodseed-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await clearPrefix(redis, prefix);
  await redis.quit();
  for (const db of databases) await db.drop();
});

function env(extra: Record<string, string>) {
  const db = freshDatabaseUrl('prodseed');
  databases.push(db);
  return {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    CONTROL_PORT: '0',
    CONTROL_METRICS_PORT: '0',
    CONTROL_HOST: '127.0.0.1',
    JWT_SECRET: 'production-seed-test-secret-long-enough-00',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

function captureStdout(run: () => void): string {
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    run();
    return spy.mock.calls.map((c) => String(c[0])).join('');
  } finally {
    spy.mockRestore();
  }
}

describe('NODE_ENV=production', () => {
  it('writes the generated admin password to a 0600 file, prints only its path, and seeds no demo', async () => {
    const file = join(dir, 'state', 'admin-password');
    const cp = await startControlPlane(env({ NODE_ENV: 'production', ADMIN_PASSWORD_FILE: file }));
    try {
      expect(cp.seeded.admin).toEqual({ email: 'admin@localhost', created: true, generatedPassword: null, passwordFile: file });
      expect(cp.seeded.demo).toBeNull();
      expect(await cp.ctx.sql`select id from projects`).toEqual([]);

      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'state'))).mode & 0o777).toBe(0o700);
      const password = (await readFile(file, 'utf8')).trimEnd();
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      const base = `http://127.0.0.1:${cp.port}`;
      const signin = await fetch(`${base}/v1/signins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'password', email: 'admin@localhost', password }),
      });
      expect(signin.status).toBe(200);

      const banner = captureStdout(() => printSeedBanner(cp.seeded, 'http://127.0.0.1:8080', cp.port));
      expect(banner).toContain(`Admin password written to ${file} (mode 0600`);
      expect(banner).not.toContain(password);
    } finally {
      await cp.close();
    }
  });

  it('replaces a stale file whole, with owner-only permissions, and seeds the demo when DEMO_SEED=true', async () => {
    const file = join(dir, 'stale', 'admin-password');
    await mkdir(join(dir, 'stale'));
    await writeFile(file, 'an old password\n', { mode: 0o644 });
    const cp = await startControlPlane(env({ NODE_ENV: 'production', ADMIN_PASSWORD_FILE: file, DEMO_SEED: 'true' }));
    try {
      expect(cp.seeded.demo?.key).toMatch(/^gw_/);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await readFile(file, 'utf8')).not.toContain('an old password');
    } finally {
      await cp.close();
    }
  });

  it('writes no file when ADMIN_PASSWORD is given', async () => {
    const file = join(dir, 'given', 'admin-password');
    const cp = await startControlPlane(env({ NODE_ENV: 'production', ADMIN_PASSWORD_FILE: file, ADMIN_EMAIL: 'ops@example.test', ADMIN_PASSWORD: 'a configured password' }));
    try {
      expect(cp.seeded.admin).toMatchObject({ created: true, generatedPassword: null, passwordFile: null });
      await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await cp.close();
    }
  });
});

describe('development', () => {
  it('still shows the generated password once on the console and seeds the demo', async () => {
    const file = join(dir, 'dev', 'admin-password');
    const cp = await startControlPlane(env({ ADMIN_PASSWORD_FILE: file }));
    try {
      const password = cp.seeded.admin?.generatedPassword as string;
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(cp.seeded.admin?.passwordFile).toBeNull();
      expect(cp.seeded.demo).not.toBeNull();
      await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(captureStdout(() => printSeedBanner(cp.seeded, 'http://127.0.0.1:8080', cp.port))).toContain(`Admin password (shown once): ${password}`);
    } finally {
      await cp.close();
    }
  });
});

describe('an ADMIN_PASSWORD against the password policy', () => {
  it('stops the start before anything is connected, with a clear message', async () => {
    const short = env({ ADMIN_EMAIL: 'ops@example.test', ADMIN_PASSWORD: 'hunter2' });
    await expect(startControlPlane(short)).rejects.toThrow(ConfigError);
    await expect(startControlPlane(short)).rejects.toThrow('ADMIN_PASSWORD must be at least 12 characters (password policy: see docs/accounts.md)');
    await expect(startControlPlane(env({ ADMIN_EMAIL: 'ops@example.test', ADMIN_PASSWORD: 'OPS@example.test' }))).rejects.toThrow(
      "ADMIN_PASSWORD must not be the account's email",
    );
    // Without ADMIN_EMAIL the account is admin@localhost.
    await expect(startControlPlane(env({ ADMIN_PASSWORD: 'admin@localhost' }))).rejects.toThrow(/must not be the account's email/);
  });

  it('makes the service exit 1 with that message and without the password', async () => {
    const child = spawnNode('control-plane/dist/main.js', [], env({ ADMIN_PASSWORD: 'hunter2' }));
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toContain('control-plane: ADMIN_PASSWORD must be at least 12 characters');
    expect(child.output()).not.toContain('hunter2');
  });
});
