import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { startControlPlane, type ControlPlane } from '../src/control-plane.js';
import { freshDatabaseUrl, TEST_REDIS_URL, testRedisPrefix, type TestDatabase } from '../../test-support/databases.js';

/**
 * One real control plane per test file: its own database and Redis prefix, listening on a free
 * port, talked to over HTTP with fetch. Log lines can be kept in memory to prove what was (not)
 * logged.
 */
export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'correct horse battery staple';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Harness {
  cp: ControlPlane;
  base: string;
  db: TestDatabase;
  prefix: string;
  jwtSecret: string;
  /** Log lines written so far (only with captureLogs). */
  logs: string[];
  /** A plain client on the test database, for inserting records and reading tables. */
  sql: postgres.Sql;
  redis: Redis;
  adminToken: string;
  adminId: string;
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  signin(email: string, password: string): Promise<string>;
  createUser(role?: 'admin' | 'member'): Promise<{ id: string; email: string; password: string; token: string }>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  captureLogs?: boolean;
  /** Reuse a database another harness created (the caller drops it). */
  db?: TestDatabase;
}

export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

export async function startHarness(label: string, options: HarnessOptions = {}): Promise<Harness> {
  const db = options.db ?? freshDatabaseUrl(label);
  const prefix = testRedisPrefix(label);
  const jwtSecret = options.env?.JWT_SECRET ?? randomSecret();
  const logs: string[] = [];
  let cp: ControlPlane;
  try {
    cp = await startControlPlane(
      {
        DATABASE_URL: db.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        CONTROL_PORT: '0',
        CONTROL_METRICS_PORT: '0',
        CONTROL_HOST: '127.0.0.1',
        JWT_SECRET: jwtSecret,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        DEMO_SEED: 'false',
        LOG_LEVEL: options.captureLogs ? 'trace' : 'silent',
        ...options.env,
      },
      options.captureLogs ? { logDestination: { write: (line: string) => void logs.push(line) } } : {},
    );
  } catch (err) {
    // A failed start leaves no database behind.
    if (options.db === undefined) await db.drop();
    throw err;
  }
  const base = `http://127.0.0.1:${cp.port}`;
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });

  async function api<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  }

  async function signin(email: string, password: string): Promise<string> {
    const res = await api('POST', '/v1/signins', { body: { grant_type: 'password', email, password } });
    if (res.status !== 200) throw new Error(`sign-in of ${email} failed: ${res.status} ${res.text}`);
    return res.body.access_token as string;
  }

  const adminToken = await signin(ADMIN_EMAIL, ADMIN_PASSWORD);
  const me = await api('GET', '/v1/users/me', { token: adminToken });
  const adminId = me.body.id as string;

  async function createUser(role: 'admin' | 'member' = 'member') {
    const email = `${role}-${randomBytes(4).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const res = await api('POST', '/v1/users', { token: adminToken, body: { email, password, role } });
    if (res.status !== 201) throw new Error(`creating a user failed: ${res.status} ${res.text}`);
    return { id: res.body.id as string, email, password, token: await signin(email, password) };
  }

  return {
    cp,
    base,
    db,
    prefix,
    jwtSecret,
    logs,
    sql,
    redis,
    adminToken,
    adminId,
    api,
    signin,
    createUser,
    async close() {
      await cp.close();
      await sql.end({ timeout: 1 });
      await clearPrefix(redis, prefix);
      redis.disconnect();
      if (options.db === undefined) await db.drop();
    },
  };
}

async function clearPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (batch.length > 0) await redis.del(...batch);
    cursor = next;
  } while (cursor !== '0');
}
