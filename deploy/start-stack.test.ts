import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix } from '../test-support/databases.js';
import { eventually, exitCode, spawnNode, waitForOutput } from '../test-support/processes.js';
import { clearPrefix } from '../test-support/redis.js';
import { freePort } from '../test-support/services.js';

/** `npm start` as a user runs it: the whole stack from an empty database, then a second start. */
const db = freshDatabaseUrl('stack');
const prefix = testRedisPrefix('stack');

afterAll(async () => {
  const redis = new Redis(TEST_REDIS_URL);
  await clearPrefix(redis, prefix);
  await redis.quit();
  await db.drop();
});

async function stackEnv() {
  return {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    PROXY_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    CONTROL_PORT: String(await freePort()),
    CONTROL_METRICS_PORT: '0',
    WRITER_PORT: '0',
    PROXY_HOST: '127.0.0.1',
    CONTROL_HOST: '127.0.0.1',
    JWT_SECRET: 'stack-test-secret-that-is-long-enough-0000',
    LOG_LEVEL: 'warn',
  };
}

describe('npm start', () => {
  it('serves a chat completion with the printed key, records it, and drains on SIGTERM', async () => {
    const env = await stackEnv();
    const stack = spawnNode('deploy/start-stack.js', [], env);
    try {
      const [, key] = await waitForOutput(stack, /^\s+(gw_[A-Za-z0-9_-]{43})$/m, 60_000);
      const [curl] = await waitForOutput(stack, /curl -s \S+\/v1\/chat\/completions .*$/m);
      expect(curl).toContain(`http://127.0.0.1:${env.PROXY_PORT}/v1/chat/completions`);
      await waitForOutput(stack, /Admin password \(shown once\): \S+/);
      await waitForOutput(stack, new RegExp(`Dashboard\\s+http://127\\.0\\.0\\.1:${env.CONTROL_PORT}/\n`));

      const res = await eventually(async () => {
        const r = await fetch(`http://127.0.0.1:${env.PROXY_PORT}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key as string },
          body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content: 'Hello' }] }),
        });
        return r.status === 200 ? r : null;
      }, 'proxy answers with the demo key', 30_000);
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0]?.message.content).toContain('Hello');

      // The writer lands the usage record and the audit event in Postgres.
      const sql = postgres(db.url, { max: 1 });
      try {
        await eventually(async () => (await sql`select 1 from usage_records`).length === 1, 'usage record written', 30_000);
        await eventually(async () => (await sql`select 1 from audit_events where type = 'gateway.request'`).length === 1, 'audit event written', 30_000);
      } finally {
        await sql.end();
      }
    } finally {
      stack.process.kill('SIGTERM');
      expect(await exitCode(stack)).toBe(0);
    }
    expect(stack.output()).not.toMatch(/error/i);
  });

  it('prints no second demo key on the next start', async () => {
    const env = await stackEnv();
    const stack = spawnNode('deploy/start-stack.js', [], env);
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${env.PROXY_PORT}/readyz`)).status === 200, 'proxy ready', 60_000);
      expect(stack.output()).not.toMatch(/gw_[A-Za-z0-9_-]{43}/);
      expect(stack.output()).not.toContain('Admin password');
    } finally {
      stack.process.kill('SIGTERM');
      expect(await exitCode(stack)).toBe(0);
    }
  });

  it('starts a killed writer again while the rest serves on; request lines are short', { timeout: 120_000 }, async () => {
    const own = freshDatabaseUrl('stackrestart');
    const ownPrefix = testRedisPrefix('stackrestart');
    const env = { ...(await stackEnv()), DATABASE_URL: own.url, REDIS_PREFIX: ownPrefix, WRITER_PORT: String(await freePort()), LOG_LEVEL: 'info' };
    const stack = spawnNode('deploy/start-stack.js', [], env);
    const sql = postgres(own.url, { max: 1, onnotice: () => {} });
    try {
      const [, key] = await waitForOutput(stack, /^\s+(gw_[A-Za-z0-9_-]{43})$/m, 60_000);
      await waitForOutput(stack, /Gateway running/, 60_000);
      const first = writerPid(stack.pid);
      process.kill(first, 'SIGKILL');
      await waitForOutput(stack, /writer exited \(SIGKILL\); restarting in 0\.5 s/);
      const second = await eventually(() => {
        const pid = writerPid(stack.pid);
        return pid !== first ? pid : null;
      }, 'a new writer process', 30_000);
      await eventually(async () => (await fetch(`http://127.0.0.1:${env.WRITER_PORT}/readyz`)).status === 200, 'new writer ready', 30_000);
      // Exiting again soon after: the pause doubles.
      process.kill(second, 'SIGKILL');
      await waitForOutput(stack, /writer exited \(SIGKILL\); restarting in 1 s/);
      await eventually(() => ![first, second].includes(writerPid(stack.pid)), 'a third writer process', 30_000);
      await eventually(async () => (await fetch(`http://127.0.0.1:${env.WRITER_PORT}/readyz`)).status === 200, 'third writer ready', 30_000);

      // The stack still answers, and the new writer records the request.
      const res = await fetch(`http://127.0.0.1:${env.PROXY_PORT}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key as string },
        body: JSON.stringify({ model: 'mock-1', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(res.status).toBe(200);
      await eventually(async () => (await sql`select 1 from usage_records`).length === 1, 'usage record written by the new writer', 30_000);

      // Development logs: one short line per event and per request, no JSON.
      expect((await fetch(`http://127.0.0.1:${env.CONTROL_PORT}/v1/projects`)).status).toBe(401);
      await waitForOutput(stack, /^\d\d:\d\d:\d\d control-plane GET \/v1\/projects 401 \d+ms$/m);
      expect(stack.output()).toMatch(/^\d\d:\d\d:\d\d writer {8}writer started {2}concurrency=4/m);
      expect(stack.output()).not.toContain('{"level"');
    } finally {
      stack.process.kill('SIGTERM');
      expect(await exitCode(stack)).toBe(0);
      await sql.end({ timeout: 1 });
      await own.drop();
      const redis = new Redis(TEST_REDIS_URL);
      await clearPrefix(redis, ownPrefix);
      await redis.quit();
    }
  });

  it('stops when a process fails its first start, saying why', { timeout: 60_000 }, async () => {
    const env = { ...(await stackEnv()), GATEWAY_CONFIG: 'control-plane/test/fixtures/bad-providers.yaml' };
    const stack = spawnNode('deploy/start-stack.js', [], env);
    expect(await exitCode(stack)).toBe(1);
    expect(stack.output()).toMatch(/proxy: .*bad-providers\.yaml/);
    expect(stack.output()).toMatch(/stack {9}proxy exited \(code 1\) before it was up; stopping the stack/);
  });
});

/** The pid of the stack's writer process (a child of the stack running writer-main.js). */
function writerPid(stackPid: number): number {
  const out = execFileSync('pgrep', ['-P', String(stackPid), '-f', 'writer-main']).toString().trim();
  return Number(out.split('\n')[0]);
}
