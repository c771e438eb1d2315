import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { newRecordId, RedisKeys, type AuditEvent, type UsageRecord } from '@gateway/shared';
import { connectDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { startWriter, type Writer, type WriterOptions } from '../../src/writer/start-writer.js';
import { RecordBuffer } from '../../../proxy/src/records/record-buffer.js';
import { clearPrefix } from '../../../test-support/redis.js';

/**
 * What the pipeline tests share: a database with projects and keys to charge, a factory of the
 * records a proxy makes (one usage record and one audit event per request), a steady producer
 * through the proxy's RecordBuffer, and the exactly-once checks.
 */
export interface Fixture {
  projects: { id: string; keys: string[] }[];
}

export async function openDatabase(url: string): Promise<Db> {
  // One connection: the fault tests terminate every other session of the database, never this one.
  const sql = await connectDb(url, { createIfMissing: true, max: 1 });
  await migrate(sql);
  return sql;
}

export async function createFixture(sql: Db, projects = 3, keysPerProject = 2): Promise<Fixture> {
  const fixture: Fixture = { projects: [] };
  for (let p = 0; p < projects; p++) {
    const [project] = await sql<{ id: string }[]>`insert into projects (name, quota_tokens) values (${`pipeline ${p}`}, null) returning id`;
    const entry = { id: project!.id, keys: [] as string[] };
    for (let k = 0; k < keysPerProject; k++) {
      const [key] = await sql<{ id: string }[]>`
        insert into api_keys (project_id, name, prefix, key_hash)
        values (${entry.id}, ${`key ${k}`}, 'gw_test', ${randomBytes(32).toString('hex')}) returning id`;
      entry.keys.push(key!.id);
    }
    fixture.projects.push(entry);
  }
  return fixture;
}

let requestCounter = 0;

/** Every inbound API, in turn: the fault tests land a mix of them. */
const ENDPOINTS = ['chat.completions', 'messages', 'responses', 'embeddings'] as const;

/** The two records one proxied request produces. */
export function requestRecords(fixture: Fixture): { usage: UsageRecord; audit: AuditEvent } {
  const n = requestCounter++;
  const project = fixture.projects[n % fixture.projects.length]!;
  const keyId = project.keys[Math.floor(n / fixture.projects.length) % project.keys.length]!;
  const id = newRecordId();
  const requestId = `req-${n}-${randomUUID().slice(0, 8)}`;
  const timestamp = Date.now();
  const endpoint = ENDPOINTS[n % ENDPOINTS.length]!;
  const input = 1 + (n % 97);
  const output = endpoint === 'embeddings' ? 0 : 1 + (n % 31);
  const cached = n % 3 === 0 ? Math.floor(input / 2) : 0;
  return {
    usage: {
      id,
      request_id: requestId,
      project_id: project.id,
      key_id: keyId,
      timestamp,
      model: 'gpt-4o-mini',
      provider: 'mock',
      tokens: { input, output, total: input + output, cached },
      cost_usd: n % 5 === 0 ? null : (input * 0.15 + output * 0.6) / 1_000_000,
      latency_ms: n % 500,
      finish_reason: 'stop',
      provider_finish_reason: null,
      stream: endpoint !== 'embeddings' && n % 2 === 0,
      endpoint,
    },
    audit: {
      id,
      request_id: requestId,
      timestamp,
      type: 'gateway.request',
      outcome: 'success',
      status: 200,
      error_code: null,
      project_id: project.id,
      key_id: keyId,
      actor: null,
      model: 'gpt-4o-mini',
      provider: 'mock',
      client_ip: '127.0.0.1',
      user_agent: 'pipeline-test',
      latency_ms: n % 500,
      endpoint,
      attempts: 1 + (n % 2),
      providers: n % 2 === 0 ? ['mock'] : ['down', 'mock'],
    },
  };
}

export interface Pushed {
  usage: string[];
  audit: string[];
}

/** A proxy's record buffer over its own connection, with the proxy's connection settings. */
export async function proxyBuffer(redisUrl: string, keys: RedisKeys, bufferMax = 250_000) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 500) });
  connection.on('error', () => {});
  const registry = new Registry();
  const buffer = new RecordBuffer({
    connection,
    keys,
    config: { recordBatchSize: 500, recordFlushMs: 5, recordBufferMax: bufferMax },
    registry,
    log: { info() {}, warn() {} },
  });
  return {
    buffer,
    registry,
    async close() {
      await buffer.close(5_000);
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

/**
 * Pushes `perSecond` requests' records per second into the buffer, in 20 ms ticks, the way a
 * proxy's request path does, until stop().
 */
export function steadyTraffic(buffer: RecordBuffer, fixture: Fixture, perSecond: number) {
  const pushed: Pushed = { usage: [], audit: [] };
  const perTick = Math.max(1, Math.round(perSecond / 50));
  const timer = setInterval(() => {
    for (let i = 0; i < perTick; i++) {
      const { usage, audit } = requestRecords(fixture);
      buffer.pushUsage(usage);
      buffer.pushAudit(audit);
      pushed.usage.push(usage.id);
      pushed.audit.push(audit.id);
    }
  }, 20);
  return {
    pushed,
    stop(): Pushed {
      clearInterval(timer);
      return pushed;
    },
  };
}

export function pushRequests(buffer: RecordBuffer, fixture: Fixture, requests: number): Pushed {
  const pushed: Pushed = { usage: [], audit: [] };
  for (let i = 0; i < requests; i++) {
    const { usage, audit } = requestRecords(fixture);
    buffer.pushUsage(usage);
    buffer.pushAudit(audit);
    pushed.usage.push(usage.id);
    pushed.audit.push(audit.id);
  }
  return pushed;
}

export async function rowCounts(sql: Db): Promise<{ usage: number; audit: number }> {
  const [row] = await sql<{ usage: number; audit: number }[]>`
    select (select count(*) from usage_records)::int as usage, (select count(*) from audit_events)::int as audit`;
  return row!;
}

export async function waitForRows(sql: Db, expected: { usage: number; audit: number }, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = { usage: -1, audit: -1 };
  for (;;) {
    last = await rowCounts(sql).catch(() => last);
    if (last.usage >= expected.usage && last.audit >= expected.audit) return;
    if (Date.now() > deadline) throw new Error(`rows never arrived: have ${JSON.stringify(last)}, want ${JSON.stringify(expected)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ExactlyOnce {
  usageRows: number;
  auditRows: number;
  usageDistinct: number;
  auditDistinct: number;
  usageMissing: number;
  auditMissing: number;
  /** Projects whose used_tokens differs from the sum of their usage rows' total_tokens. */
  projectsOff: number;
  /** Keys whose last_used_at is not the time of their newest record. */
  keysOff: number;
}

/** Row counts, duplicate and missing ids against what was pushed, and the derived counters. */
export async function exactlyOnce(sql: Db, pushed: Pushed): Promise<ExactlyOnce> {
  const [counts] = await sql<{ ur: number; ar: number; ud: number; ad: number }[]>`
    select (select count(*) from usage_records)::int as ur, (select count(*) from audit_events)::int as ar,
           (select count(distinct id) from usage_records)::int as ud, (select count(distinct id) from audit_events)::int as ad`;
  const [missing] = await sql<{ um: number; am: number }[]>`
    select (select count(*) from unnest(${sql.array(pushed.usage, 2950)}::uuid[]) p(id) where not exists (select 1 from usage_records u where u.id = p.id))::int as um,
           (select count(*) from unnest(${sql.array(pushed.audit, 2950)}::uuid[]) p(id) where not exists (select 1 from audit_events a where a.id = p.id))::int as am`;
  const [endpoints] = await sql<{ kinds: number }[]>`select count(distinct endpoint)::int as kinds from usage_records`;
  if (pushed.usage.length >= 4 && endpoints!.kinds !== 4) throw new Error(`expected records of all four endpoints, found ${endpoints!.kinds} kinds`);
  const [projects] = await sql<{ off: number }[]>`
    select count(*)::int as off from projects p
    where p.used_tokens <> coalesce((select sum(total_tokens) from usage_records u where u.project_id = p.id), 0)`;
  const [keys] = await sql<{ off: number }[]>`
    select count(*)::int as off from api_keys k
    where k.last_used_at is distinct from (select to_timestamp(max(ts) / 1000.0) from usage_records u where u.key_id = k.id)`;
  return {
    usageRows: counts!.ur,
    auditRows: counts!.ar,
    usageDistinct: counts!.ud,
    auditDistinct: counts!.ad,
    usageMissing: missing!.um,
    auditMissing: missing!.am,
    projectsOff: projects!.off,
    keysOff: keys!.off,
  };
}

/** What exactlyOnce must return when every pushed record landed once. */
export function landedOnce(pushed: Pushed): ExactlyOnce {
  return {
    usageRows: pushed.usage.length,
    auditRows: pushed.audit.length,
    usageDistinct: pushed.usage.length,
    auditDistinct: pushed.audit.length,
    usageMissing: 0,
    auditMissing: 0,
    projectsOff: 0,
    keysOff: 0,
  };
}

export async function startTestWriter(env: Record<string, string>, options: WriterOptions = {}): Promise<Writer> {
  return startWriter({ LOG_LEVEL: 'silent', WRITER_PORT: '0', WRITER_CONCURRENCY: '4', ...env }, options);
}

export function recordsQueue(redisUrl: string, keys: RedisKeys) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const queue = new Queue(keys.recordsQueue, { connection, prefix: keys.bullPrefix });
  queue.on('error', () => {});
  return {
    queue,
    async close() {
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return (value?.value as number | undefined) ?? 0;
}

/** Removes the queue keys a test left under its prefix on a shared Redis. */
export async function clearRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    await clearPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
