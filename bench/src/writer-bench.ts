import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { CompactRowsWriter, DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, encodeCompactRecordBatch, newRecordId, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys, redactUrl, type AuditEvent, type UsageRecord } from '@gateway/shared';

/**
 * `node bench/dist/writer-bench.js`: the writer's own throughput (DESIGN §6). The records queue
 * is filled with N records in batches while no writer runs, then writer processes are started
 * and the time until the queue is drained gives records/s into PostgreSQL. Every record is then
 * counted in PostgreSQL, so a fast but lossy run cannot pass for a result.
 *
 * It works in a database and a Redis prefix of its own, both removed afterwards (--keep keeps
 * the database), so it can run beside a live stack on the same servers.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WRITER = 'control-plane/dist/writer-main.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '4' },
    writers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? DEFAULT_REDIS_URL },
    database: { type: 'string', default: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  process.stdout.write(
    'usage: node bench/dist/writer-bench.js [--records 200000] [--batch 500] [--concurrency 4] [--writers 1] [--rounds 3]\n' +
      '                                      [--redis URL] [--database URL] [--keep]\n' +
      'The database URL names the server; the bench creates (and drops) a database of its own there.\n' +
      'Each round refills the queue and drains it again; the figure is the median round.\n',
  );
  process.exit(0);
}

const records = positive('records');
const batchSize = positive('batch');
const concurrency = positive('concurrency');
const writers = positive('writers');
const rounds = positive('rounds');

function positive(name: 'records' | 'batch' | 'concurrency' | 'writers' | 'rounds'): number {
  const value = Number(args[name]);
  if (!Number.isSafeInteger(value) || value < 1) {
    process.stderr.write(`writer-bench: --${name} must be a positive integer\n`);
    process.exit(2);
  }
  return value;
}

const JOB_OPTIONS = RECORD_JOB_OPTIONS;

interface Writer {
  child: ChildProcess;
  output(): string;
  started: Promise<number>;
  stop(): Promise<number | null>;
}

function startWriterProcess(env: Record<string, string>): Writer {
  const child = spawn(process.execPath, [WRITER], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let resolveStarted: (at: number) => void = () => {};
  let rejectStarted: (err: Error) => void = () => {};
  const started = new Promise<number>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });
  const onData = (d: Buffer) => {
    output += d.toString();
    if (output.includes('writer started')) resolveStarted(performance.now());
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('exit', (code) => rejectStarted(new Error(`writer exited (${code}) before it started:\n${output.slice(-4000)}`)));
  // Only the first writer's start is awaited; a later one failing is caught by the drain loop.
  started.catch(() => {});
  return {
    child,
    output: () => output,
    started,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

interface Fixture {
  projects: { id: string; keys: string[] }[];
}

function makeBatch(fixture: Fixture, requests: number, counter: { n: number }) {
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  const now = Date.now();
  for (let i = 0; i < requests; i++) {
    const n = counter.n++;
    const project = fixture.projects[n % fixture.projects.length]!;
    const keyId = project.keys[n % project.keys.length]!;
    const id = newRecordId();
    const requestId = randomUUID();
    const input = 20 + (n % 800);
    const output = 5 + (n % 300);
    usage.push({
      id,
      request_id: requestId,
      project_id: project.id,
      key_id: keyId,
      timestamp: now,
      model: 'gpt-4o-mini',
      provider: 'openai',
      tokens: { input, output, total: input + output },
      latency_ms: 100 + (n % 900),
      finish_reason: 'stop',
      stream: n % 2 === 0,
    });
    audit.push({
      id,
      request_id: requestId,
      timestamp: now,
      type: 'gateway.request',
      outcome: 'success',
      status: 200,
      error_code: null,
      project_id: project.id,
      key_id: keyId,
      actor: null,
      model: 'gpt-4o-mini',
      provider: 'openai',
      client_ip: '10.1.2.3',
      user_agent: 'OpenAI/JS 6.9.0',
      latency_ms: 100 + (n % 900),
    });
  }
  // As proxies send them: one compact row per request (record batch version 3).
  const rows = new CompactRowsWriter();
  for (let i = 0; i < usage.length; i++) rows.add(audit[i] as AuditEvent, usage[i] as UsageRecord);
  rows.seal();
  return encodeCompactRecordBatch([rows]);
}

const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
const dbName = `gateway_writer_bench_${stamp.toLowerCase()}_${randomBytes(2).toString('hex')}`;
const prefix = `writer-bench-${randomBytes(4).toString('hex')}:`;
const dbUrl = new URL(args.database);
dbUrl.pathname = `/${dbName}`;
const adminUrl = new URL(args.database);
adminUrl.pathname = '/postgres';

const env = {
  DATABASE_URL: dbUrl.toString(),
  REDIS_URL: args.redis,
  REDIS_PREFIX: prefix,
  WRITER_PORT: '0',
  WRITER_CONCURRENCY: String(concurrency),
  LOG_LEVEL: 'info',
};

interface Round {
  records: number;
  batches: number;
  written: number;
  seconds: number;
  recordsPerSecond: number;
  /** CPU time the writer processes used, start-up included (Linux only; 0 elsewhere). */
  cpuSeconds: number;
  /** CPU time of their PostgreSQL backends (0 when the server is on another machine). */
  postgresCpuSeconds: number;
}

/**
 * On a shared two-core machine the wall-clock figure moves with whatever else runs; the writer's
 * own CPU time per record does not, so it is reported beside it.
 */
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Fills the queue with no writer running, then times writer processes draining it. */
async function runRound(sql: postgres.Sql, fixture: Fixture): Promise<Round> {
  // Each batch is half usage records, half audit events (one of each per request).
  const requestsPerBatch = Math.max(1, Math.floor(batchSize / 2));
  const totalRequests = Math.ceil(records / 2);
  const counter = { n: 0 };
  let batches = 0;
  while (counter.n < totalRequests) {
    const bulk = [];
    for (let i = 0; i < 50 && counter.n < totalRequests; i++) {
      bulk.push({ name: RECORD_JOB_NAME, data: makeBatch(fixture, Math.min(requestsPerBatch, totalRequests - counter.n), counter), opts: { ...JOB_OPTIONS, jobId: randomUUID() } });
    }
    await queue.addBulk(bulk);
    batches += bulk.length;
  }
  const expected = counter.n * 2;

  const started: Writer[] = [];
  for (let i = 0; i < writers; i++) started.push(startWriterProcess(env));
  running.push(...started);
  try {
    // From the first writer's start line to an empty queue.
    const t0 = await Promise.race(started.map((w) => w.started));
    let t1 = 0;
    for (;;) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((n) => n === 0)) {
        t1 = performance.now();
        break;
      }
      if (started.some((w) => w.child.exitCode !== null)) throw new Error(`a writer exited during the run:\n${started.map((w) => w.output()).join('\n')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const seconds = (t1 - t0) / 1000;
    const cpuSeconds = started.reduce((sum, w) => sum + cpuSecondsOf(w.child.pid), 0);
    // The writers' PostgreSQL backends, when the server runs on this machine.
    const backends = await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    const postgresCpuSeconds = backends.reduce((sum, b) => sum + cpuSecondsOf(b.pid), 0);
    const [rows] = await sql<{ usage: number; audit: number }[]>`
      select (select count(*) from usage_records)::int as usage, (select count(*) from audit_events)::int as audit`;
    return { records: expected, batches, written: rows!.usage + rows!.audit, seconds, recordsPerSecond: Math.round(expected / seconds), cpuSeconds, postgresCpuSeconds };
  } finally {
    await Promise.all(started.map((w) => w.stop()));
  }
}

const admin = postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
const redis = new Redis(args.redis, { maxRetriesPerRequest: null });
const keys = new RedisKeys(prefix);
const queue = new Queue(keys.recordsQueue, { connection: redis, prefix: keys.bullPrefix });
const running: Writer[] = [];
let sql: postgres.Sql | undefined;

try {
  await admin`create database ${admin(dbName)}`;
  // A first writer on the empty database applies the migrations; it is stopped before the fill.
  const migrator = startWriterProcess(env);
  running.push(migrator);
  await migrator.started;
  await migrator.stop();

  sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
  const fixture: Fixture = { projects: [] };
  for (let p = 0; p < 10; p++) {
    const [project] = await sql<{ id: string }[]>`insert into projects (name) values (${`bench ${p}`}) returning id`;
    const keys: string[] = [];
    for (let k = 0; k < 5; k++) {
      const [key] = await sql<{ id: string }[]>`
        insert into api_keys (project_id, name, prefix, key_hash) values (${project!.id}, ${`key ${k}`}, 'gw_bench', ${randomBytes(32).toString('hex')}) returning id`;
      keys.push(key!.id);
    }
    fixture.projects.push({ id: project!.id, keys });
  }

  const results: Round[] = [];
  for (let round = 1; round <= rounds; round++) {
    results.push(await runRound(sql, fixture));
    // Each round starts from empty tables, so later rounds do not write into bigger indexes.
    await sql`truncate usage_records, audit_events`;
    await sql`update projects set used_tokens = 0`;
  }
  const sorted = [...results].sort((a, b) => a.recordsPerSecond - b.recordsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const expected = median.records;
  const written = Math.min(...results.map((r) => r.written));

  const result = {
    scenario: 'writer',
    at: new Date().toISOString(),
    records: expected,
    batches: median.batches,
    batch_size: batchSize,
    writers,
    concurrency,
    rounds: results.map((r) => ({
      seconds: Number(r.seconds.toFixed(3)),
      records_per_second: r.recordsPerSecond,
      written: r.written,
      writer_cpu_seconds: r.cpuSeconds,
      writer_cpu_us_per_record: Math.round((r.cpuSeconds * 1e6) / r.records),
      postgres_cpu_us_per_record: Math.round((r.postgresCpuSeconds * 1e6) / r.records),
    })),
    records_per_second: median.recordsPerSecond,
    cpus: cpus().length,
    node: process.version,
    redis: redactUrl(args.redis),
    database: redactUrl(adminUrl.toString()),
  };
  const cpuPerRecord = Math.round((median.cpuSeconds * 1e6) / median.records);
  const pgPerRecord = Math.round((median.postgresCpuSeconds * 1e6) / median.records);
  const header = ['scenario', 'records', 'batch', 'writers', 'concurrency', 'rounds', 'records/s (each round)', 'records/s (median)', 'cpu µs/record writer', 'postgres'];
  const row = ['writer', expected, batchSize, writers, concurrency, rounds, results.map((r) => r.recordsPerSecond).join(' '), median.recordsPerSecond, cpuPerRecord, pgPerRecord].map(String);
  const widths = header.map((h, i) => Math.max(h.length, row[i]!.length));
  process.stdout.write(`${header.map((h, i) => h.padStart(widths[i]!)).join('  ')}\n${row.map((v, i) => v.padStart(widths[i]!)).join('  ')}\n`);
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  const file = `${ROOT}bench/results/writer-${stamp}.json`;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`wrote ${file.slice(ROOT.length)}\n`);
  if (results.some((r) => r.written !== r.records)) {
    process.stderr.write(`writer-bench: a round queued ${expected} records but only ${written} reached PostgreSQL\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`writer-bench: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await Promise.allSettled(running.map((w) => w.stop()));
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close().catch(() => {});
  redis.disconnect();
  await sql?.end({ timeout: 1 }).catch(() => {});
  if (!args.keep) await admin`drop database if exists ${admin(dbName)} with (force)`.catch(() => {});
  await admin.end({ timeout: 1 }).catch(() => {});
}
