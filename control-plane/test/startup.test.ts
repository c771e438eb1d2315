import postgres from 'postgres';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeKeyRecord, hashApiKey, RedisKeys } from '@gateway/shared';
import { startControlPlane } from '../src/control-plane.js';
import { migrate } from '../src/db/migrate.js';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { exitCode, spawnNode } from '../../test-support/processes.js';
import { clearPrefix } from '../../test-support/redis.js';

const db = freshDatabaseUrl('startup');
const prefix = testRedisPrefix('startup');
const env = {
  DATABASE_URL: db.url,
  REDIS_URL: TEST_REDIS_URL,
  REDIS_PREFIX: prefix,
  CONTROL_PORT: '0',
  CONTROL_METRICS_PORT: '0',
  CONTROL_HOST: '127.0.0.1',
  JWT_SECRET: 'startup-test-secret-that-is-long-enough-000',
  LOG_LEVEL: 'silent',
};
const redis = new Redis(TEST_REDIS_URL);

afterAll(async () => {
  await clearPrefix(redis, prefix);
  await redis.quit();
  await db.drop();
});

describe('first start on an empty database', () => {
  it('creates the database, applies migrations, partitions, seeds once', async () => {
    const first = await startControlPlane(env);
    try {
      expect(first.seeded.admin?.created).toBe(true);
      expect(first.seeded.admin?.email).toBe('admin@localhost');
      expect(first.seeded.admin?.generatedPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
      const demo = first.seeded.demo;
      expect(demo?.key).toMatch(/^gw_[A-Za-z0-9_-]{43}$/);
      // The demo key is in the Redis projection, by hash only.
      const raw = await redis.get(new RedisKeys(prefix).apiKey(hashApiKey(demo!.key)));
      expect(decodeKeyRecord(raw!)).toMatchObject({ id: demo!.keyId, project_id: demo!.projectId });

      const sql = first.ctx.sql;
      const tables = await sql<{ tablename: string }[]>`select tablename from pg_tables where schemaname = 'public'`;
      const names = tables.map((t) => t.tablename);
      for (const t of ['users', 'projects', 'project_members', 'api_keys', 'usage_records', 'audit_events', 'schema_migrations', 'gateway_meta']) {
        expect(names).toContain(t);
      }
      const now = new Date();
      const month = `p${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      expect(names).toContain(`usage_records_${month}`);
      expect(names).toContain(`audit_events_${month}`);
      const stored = await sql<{ key_hash: string; prefix: string }[]>`select key_hash, prefix from api_keys`;
      expect(stored).toHaveLength(1);
      expect(stored[0]!.key_hash).toBe(hashApiKey(demo!.key));
      expect(demo!.key.startsWith(stored[0]!.prefix)).toBe(true);
      expect(JSON.stringify(stored)).not.toContain(demo!.key);
      expect((await migrate(sql)).applied).toEqual([]);
    } finally {
      await first.close();
    }
  });

  it('seeds nothing the second time', async () => {
    const second = await startControlPlane(env);
    try {
      expect(second.seeded.demo).toBeNull();
      expect(second.seeded.admin).toBeNull();
      const keys = await second.ctx.sql`select id from api_keys`;
      expect(keys).toHaveLength(1);
      const users = await second.ctx.sql`select id from users`;
      expect(users).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('seeds an admin from ADMIN_EMAIL / ADMIN_PASSWORD when that email does not exist', async () => {
    const cp = await startControlPlane({ ...env, ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'correct horse battery staple' });
    try {
      expect(cp.seeded.admin).toMatchObject({ email: 'ops@example.com', created: true, generatedPassword: null });
      const rows = await cp.ctx.sql<{ role: string; password_hash: string }[]>`select role, password_hash from users where email = 'ops@example.com'`;
      expect(rows[0]?.role).toBe('admin');
      expect(rows[0]?.password_hash).toMatch(/^scrypt\$/);
    } finally {
      await cp.close();
    }
  });

  it('rebuilds the Redis projection from Postgres at start', async () => {
    await clearPrefix(redis, prefix);
    const cp = await startControlPlane(env);
    try {
      const sql = postgres(db.url, { max: 1 });
      const [row] = await sql<{ key_hash: string }[]>`select key_hash from api_keys`;
      await sql.end();
      expect(await redis.get(new RedisKeys(prefix).apiKey(row!.key_hash))).not.toBeNull();
    } finally {
      await cp.close();
    }
  });
});

describe('start-up failures name what failed and how to fix it', () => {
  it('control plane: PostgreSQL unreachable', async () => {
    const child = spawnNode('control-plane/dist/main.js', [], { ...env, STARTUP_TIMEOUT_MS: '0', DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/gateway' });
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/PostgreSQL is unreachable at postgres:\/\/postgres:REDACTED@127\.0\.0\.1:1\/gateway \(ECONNREFUSED\)\. Start PostgreSQL/);
    expect(child.output()).not.toContain('hunter2');
  });

  it('control plane: Redis unreachable', async () => {
    const child = spawnNode('control-plane/dist/main.js', [], { ...env, STARTUP_TIMEOUT_MS: '0', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/Redis is unreachable at redis:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)\. Start Redis/);
  });

  it('proxy: Redis unreachable', async () => {
    const child = spawnNode('proxy/dist/main.js', [], { REDIS_URL: 'redis://127.0.0.1:1', STARTUP_TIMEOUT_MS: '0', PROXY_PORT: '0', LOG_LEVEL: 'silent' });
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/proxy: Redis is unreachable at redis:\/\/127\.0\.0\.1:1/);
  });

  it('proxy: an invalid providers file names the provider and field', async () => {
    const child = spawnNode('proxy/dist/main.js', [], { GATEWAY_CONFIG: 'control-plane/test/fixtures/bad-providers.yaml', PROXY_PORT: '0', LOG_LEVEL: 'silent' });
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toMatch(/proxy: .*bad-providers\.yaml: providers\[1\] \(second\): models\[0\] \(b\): "price".input must be a number/);
  });

  it('control plane: a malformed variable', async () => {
    const child = spawnNode('control-plane/dist/main.js', [], { ...env, CONTROL_PORT: 'http' });
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toContain('CONTROL_PORT must be an integer, got "http"');
  });
});

describe('npm run migrate', () => {
  it('creates and migrates a database, and drops old partitions on request', async () => {
    const target = freshDatabaseUrl('migratecli');
    try {
      const first = spawnNode('control-plane/dist/migrate-main.js', [], { DATABASE_URL: target.url });
      expect(await exitCode(first)).toBe(0);
      expect(first.output()).toMatch(/applied 0001_init\.sql, 0002_project_policies\.sql/);
      const again = spawnNode('control-plane/dist/migrate-main.js', ['--drop-before', '2099-01'], { DATABASE_URL: target.url });
      expect(await exitCode(again)).toBe(0);
      expect(again.output()).toContain('none pending');
      expect(again.output()).toMatch(/partitions dropped: .*usage_records_p\d{6}/);
      const bad = spawnNode('control-plane/dist/migrate-main.js', ['--drop-before', 'soon'], { DATABASE_URL: target.url });
      expect(await exitCode(bad)).toBe(1);
      expect(bad.output()).toContain('--drop-before takes a month as YYYY-MM');
    } finally {
      await target.drop();
    }
  });
});
