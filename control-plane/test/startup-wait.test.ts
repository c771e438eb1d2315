import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCode, eventually, spawnNode, waitForOutput, type Child } from '../../test-support/processes.js';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../../test-support/services.js';

/**
 * Processes started before their dependencies (a host booting its services in parallel, an
 * orchestrator starting everything at once) wait for them, a log line per step, and come up once
 * they answer instead of exiting.
 */
describe('start-up wait', () => {
  let redis: PrivateRedis;
  let pg: PrivatePostgres;
  const children: Child[] = [];

  beforeAll(async () => {
    [redis, pg] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  });

  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await redis?.stop('SIGKILL');
    await pg?.destroy();
  });

  it('a control plane started before PostgreSQL and Redis comes up once they start', { timeout: 120_000 }, async () => {
    await Promise.all([redis.stop(), pg.stop()]);
    const port = await freePort();
    const child = spawnNode('control-plane/dist/main.js', [], {
      DATABASE_URL: pg.urlFor('gateway').replace('postgres@', 'postgres:pg-s3cret@'),
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'gw:',
      CONTROL_PORT: String(port),
      CONTROL_METRICS_PORT: '0',
      CONTROL_HOST: '127.0.0.1',
      JWT_SECRET: 'startup-wait-test-secret-long-enough-00000',
      LOG_LEVEL: 'warn',
    });
    children.push(child);
    // Two steps each, so the wait is seen repeating rather than a single slow connect.
    await waitForOutput(child, /waiting for PostgreSQL at postgres:\/\/postgres:REDACTED@127\.0\.0\.1:\d+\/gateway \(ECONNREFUSED\); attempt 2/);
    await pg.start();
    await waitForOutput(child, new RegExp(`waiting for Redis at redis://127\\.0\\.0\\.1:${redis.port} \\(ECONNREFUSED\\); attempt 2`), 60_000);
    expect(child.process.exitCode).toBeNull();
    await redis.start();
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 'control plane ready', 60_000);
    expect(child.output()).not.toContain('pg-s3cret');
    expect(await child.kill('SIGTERM')).toBe(0);
  });

  it('a writer started before Redis comes up once Redis starts', { timeout: 60_000 }, async () => {
    await redis.stop();
    const child = spawnNode('control-plane/dist/writer-main.js', [], {
      DATABASE_URL: pg.urlFor('gateway'),
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'gw:',
      WRITER_PORT: '0',
      LOG_LEVEL: 'info',
    });
    children.push(child);
    await waitForOutput(child, /waiting for Redis at .*attempt 2/);
    expect(child.output()).not.toContain('writer started');
    await redis.start();
    await waitForOutput(child, /writer started/, 30_000);
    expect(await child.kill('SIGTERM')).toBe(0);
  });

  it('a process waiting for its dependencies stops at once on SIGTERM, with 0', { timeout: 60_000 }, async () => {
    await redis.stop();
    const child = spawnNode('control-plane/dist/writer-main.js', [], { DATABASE_URL: pg.urlFor('gateway'), REDIS_URL: redis.url, WRITER_PORT: '0', LOG_LEVEL: 'warn' });
    children.push(child);
    await waitForOutput(child, /waiting for Redis at /);
    expect(await child.kill('SIGTERM')).toBe(0);
    expect(child.output()).toContain('writer: SIGTERM while starting; exiting');
  });

  it('gives up after STARTUP_TIMEOUT_MS with the unreachable message', { timeout: 60_000 }, async () => {
    await redis.stop();
    const child = spawnNode('proxy/dist/main.js', [], {
      REDIS_URL: redis.url,
      STARTUP_TIMEOUT_MS: '1500',
      PROXY_PORT: '0',
      METRICS_PORT: '0',
      PROXY_WORKERS: '1',
      LOG_LEVEL: 'warn',
    });
    children.push(child);
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/waiting for Redis at redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); attempt 1/);
    expect(child.output()).toMatch(/proxy: Redis is unreachable at redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\. Start Redis/);
  });

  it('npm run migrate waits for PostgreSQL', { timeout: 60_000 }, async () => {
    await pg.stop();
    const child = spawnNode('control-plane/dist/migrate-main.js', [], { DATABASE_URL: pg.urlFor('migrated') });
    children.push(child);
    await waitForOutput(child, /migrate: waiting for PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/migrated \(ECONNREFUSED\); attempt 1/);
    await pg.start();
    expect(await exitCode(child)).toBe(0);
    expect(child.output()).toMatch(/migrations: applied 0001_init\.sql/);
  });

  it('does not wait when PostgreSQL refuses the role: waiting would not change the answer', async () => {
    const child = spawnNode('control-plane/dist/migrate-main.js', [], { DATABASE_URL: `postgres://nosuchrole:pw@127.0.0.1:${pg.port}/gateway`, STARTUP_TIMEOUT_MS: '600000' });
    children.push(child);
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/^migrate: PostgreSQL at postgres:\/\/nosuchrole:REDACTED@127\.0\.0\.1:\d+\/gateway refused the connection's credentials \(28000\)\. Check the user and password in DATABASE_URL/m);
    expect(child.output()).not.toContain('waiting for');
  });

  it('does not wait when Redis refuses the password', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', 'right-pass'], { stdio: 'ignore' });
    try {
      await eventually(() => accepts(port), 'redis-server with a password listening');
      const child = spawnNode('proxy/dist/main.js', [], {
        REDIS_URL: `redis://:wrong-pass@127.0.0.1:${port}`,
        STARTUP_TIMEOUT_MS: '600000',
        PROXY_PORT: '0',
        METRICS_PORT: '0',
        PROXY_WORKERS: '1',
        LOG_LEVEL: 'warn',
      });
      children.push(child);
      expect(await exitCode(child)).toBe(1);
      expect(child.output()).toMatch(/^proxy: Redis at redis:\/\/:REDACTED@127\.0\.0\.1:\d+ refused the connection's credentials \(WRONGPASS/m);
      expect(child.output()).not.toContain('wrong-pass');
      expect(child.output()).not.toContain('waiting for');
    } finally {
      server.kill('SIGKILL');
    }
  });
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
