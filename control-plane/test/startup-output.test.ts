import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane, StartupError } from '../src/control-plane.js';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { clearPrefix } from '../../test-support/redis.js';

/**
 * What a first start looks like to the person who typed `npm start`: where it listens (loopback
 * unless CONTROL_HOST says otherwise), in words without internal jargon; a restart without
 * JWT_SECRET keeps everyone signed in (the development secret is kept in a 0600 file); a busy
 * metrics port is one sentence naming the setting.
 */
const db = freshDatabaseUrl('startup-output');
const prefix = testRedisPrefix('startup-output');
const redis = new Redis(TEST_REDIS_URL);
const ADMIN_PASSWORD = 'a startup output password';

afterAll(async () => {
  await clearPrefix(redis, prefix);
  await redis.quit();
  await db.drop();
});

async function start(extra: Record<string, string>, lines: string[] = []) {
  return startControlPlane(
    {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      CONTROL_PORT: '0',
      CONTROL_METRICS_PORT: '0',
      ADMIN_EMAIL: 'admin@example.test',
      ADMIN_PASSWORD,
      LOG_LEVEL: 'info',
      ...extra,
    },
    { logDestination: { write: (line: string) => void lines.push(line) } },
  );
}

describe('a first start', () => {
  const stateDir = mkdtemp(join(tmpdir(), 'gateway-state-'));

  it('listens on loopback by default and says so plainly', async () => {
    const lines: string[] = [];
    const cp = await start({ JWT_SECRET_FILE: join(await stateDir, 'jwt-secret') }, lines);
    try {
      const address = cp.app.server.address();
      expect(typeof address === 'object' && address?.address).toBe('127.0.0.1');
      const messages = lines.map((l) => JSON.parse(l).msg as string);
      expect(messages).toContain('database schema created');
      expect(messages.filter((m) => m.startsWith('management API and dashboard at http://127.0.0.1:'))).toHaveLength(1);
      const text = lines.join('\n');
      for (const jargon of ['projection', 'migrations applied', '0001_init', 'invalidation', 'Server listening', 'subscribed']) expect(text).not.toContain(jargon);
    } finally {
      await cp.close();
    }
  });

  it('without JWT_SECRET keeps the development secret in its file, so a restart signs nobody out', async () => {
    const file = join(await stateDir, 'jwt-secret');
    const first = await start({ JWT_SECRET_FILE: file });
    let token: string;
    try {
      const res = await fetch(`http://127.0.0.1:${first.port}/v1/signins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'password', email: 'admin@example.test', password: ADMIN_PASSWORD }),
      });
      expect(res.status).toBe(200);
      token = ((await res.json()) as { access_token: string }).access_token;
    } finally {
      await first.close();
    }
    const second = await start({ JWT_SECRET_FILE: file });
    try {
      const me = await fetch(`http://127.0.0.1:${second.port}/v1/users/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('names CONTROL_METRICS_PORT when that port is taken', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const failed = await start({ JWT_SECRET_FILE: join(await stateDir, 'jwt-secret'), CONTROL_METRICS_PORT: String(port) }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(StartupError);
      expect((failed as Error).message).toMatch(new RegExp(`metrics port ${port} \\(EADDRINUSE\\); set CONTROL_METRICS_PORT`));
    } finally {
      busy.close();
    }
  });
});
