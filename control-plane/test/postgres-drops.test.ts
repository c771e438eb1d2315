import postgres from 'postgres';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { eventually, spawnNode, type Child } from '../../test-support/processes.js';
import { clearPrefix } from '../../test-support/redis.js';
import { freePort } from '../../test-support/services.js';
import { isDriverDroppedConnection, isDriverWriteCrash } from '../src/db/driver-guard.js';

/**
 * PostgreSQL drops the control plane's connections in the middle of its transactions (a restart,
 * a failover): the process must stay up and serve again, on a fresh pool.
 */
const db = freshDatabaseUrl('pgdrops');
const prefix = testRedisPrefix('pgdrops');
let child: Child | undefined;

afterAll(async () => {
  await child?.kill('SIGKILL');
  const redis = new Redis(TEST_REDIS_URL);
  await clearPrefix(redis, prefix);
  await redis.quit();
  await db.drop();
});

describe('control plane under dropped Postgres connections', () => {
  it('stays up while its sessions are terminated mid-transaction, and serves again', { timeout: 240_000 }, async () => {
    const port = await freePort();
    child = spawnNode('control-plane/dist/main.js', [], {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      CONTROL_PORT: String(port),
      CONTROL_METRICS_PORT: '0',
      CONTROL_HOST: '127.0.0.1',
      JWT_SECRET: 'pgdrops-test-secret-that-is-long-enough-00',
      ADMIN_EMAIL: 'ops@example.test',
      ADMIN_PASSWORD: 'correct horse battery staple',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'warn',
    });
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${base}/healthz`)).ok, 'control plane up', 30_000);
    const signin = await fetch(`${base}/v1/signins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', email: 'ops@example.test', password: 'correct horse battery staple' }),
    });
    const { access_token: token } = (await signin.json()) as { access_token: string };
    // Names are unique per account: each attempt asks for its own.
    let attempts = 0;
    const create = () =>
      fetch(`${base}/v1/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: `p ${++attempts}` }),
        // A request the drops left unanswered counts as failed; the check below is that the process serves again.
        signal: AbortSignal.timeout(15_000),
      }).then(
        (r) => r.status,
        () => 0,
      );

    const admin = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      let kills = 0;
      for (let round = 0; round < 20; round++) {
        const load = Promise.all(Array.from({ length: 8 }, create));
        const victims = await admin<{ pid: number }[]>`
          select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
        for (const { pid } of victims) await admin`select pg_terminate_backend(${pid})`;
        kills += victims.length;
        await load;
      }
      expect(kills).toBeGreaterThan(0);
    } finally {
      await admin.end({ timeout: 1 });
    }
    expect(child.process.exitCode, child.output()).toBeNull();
    await eventually(async () => (await create()) === 201, 'project created after the drops', 30_000);
    expect(child.process.exitCode, child.output()).toBeNull();
    expect(child.output()).not.toMatch(/uncaught exception/);
  });

  it('recognises only the driver failure it works around', () => {
    const driver = new TypeError("Cannot read properties of null (reading 'write')");
    driver.stack = `${driver.message}\n    at Immediate.nextWrite (/app/node_modules/postgres/src/connection.js:255:22)`;
    expect(isDriverWriteCrash(driver)).toBe(true);
    const other = new TypeError("Cannot read properties of null (reading 'write')");
    other.stack = `${other.message}\n    at handler (/app/control-plane/dist/http/app.js:10:3)`;
    expect(isDriverWriteCrash(other)).toBe(false);
    expect(isDriverWriteCrash(new Error('nextWrite postgres/src/connection.js'))).toBe(false);

    const dropped = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
    dropped.stack = `${dropped.message}\n    at Socket.closed (/app/node_modules/postgres/src/connection.js:453:57)`;
    expect(isDriverDroppedConnection(dropped)).toBe(true);
    expect(isDriverDroppedConnection(Object.assign(new Error('x'), { code: 'CONNECTION_CLOSED' }))).toBe(false);
    expect(isDriverDroppedConnection(Object.assign(new Error('duplicate'), { code: '23505', stack: dropped.stack }))).toBe(false);
    expect(isDriverDroppedConnection('CONNECTION_CLOSED')).toBe(false);
  });
});
