import { Worker, type Job, type MinimalJob } from 'bullmq';
import { Unpackr } from 'msgpackr';
import type { Logger } from 'pino';
import { ContractError, decodeRecordBatch, RECORD_BACKOFF_TYPE, RECORD_BATCH_VERSIONS, type RecordBatch, type RecordBatchVersion, type RedisKeys, type RedisClient } from '@gateway/shared';
import { writeBatch, type WriteResult } from './batch-writer.js';
import { isUnavailable } from './postgres-errors.js';
import { addAuditRows, addUsageRows, emptyAuditRows, emptyUsageRows, rowCount, type RejectedRecord } from './record-rows.js';
import type { WriterDb } from './writer-db.js';
import type { WriterMetrics } from './writer-metrics.js';
import type { ServiceTracer } from '../tracing/service-tracer.js';

export { RECORD_BACKOFF_TYPE };

export interface RecordWorkerOptions {
  concurrency: number;
  /** A writer that dies holding a batch loses its lock after this long; another then takes it. */
  lockDurationMs: number;
  /** How often each writer looks for batches whose writer died. */
  stalledIntervalMs: number;
  maxBackoffMs: number;
  /**
   * Batch versions this writer reads: every version this build knows, unless a test stands in
   * for a writer of an older release.
   */
  batchVersions?: readonly RecordBatchVersion[];
  /** Runs after each batch committed (the webhook events it set off); must not throw. */
  onWritten?: (result: WriteResult) => Promise<void>;
  /** A span per batch; null or absent when tracing is off. */
  tracer?: ServiceTracer | null;
  /** Record queues to consume (RECORD_QUEUES); 1 when absent. */
  recordQueues?: number;
}

export interface BatchOutcome {
  written: number;
  replayed: number;
  invalid: number;
}

const PROBE_MIN_MS = 250;
const PROBE_MAX_MS = 5_000;
const peek = new Unpackr({ useRecords: false, moreTypes: false });

/**
 * BullMQ consumer of the records queue. Several may run against one queue, in one process or
 * many: BullMQ hands each job to one worker at a time, a lock held by a dead worker expires and
 * its job goes back to waiting, and writeBatch makes the second write of a batch a no-op.
 *
 * When Postgres stops answering, the failing batch is left to BullMQ's retry and this worker stops
 * taking new ones until a probe gets through, instead of cycling every queued batch through a
 * failure.
 */
export class RecordWorker {
  /** The first record queue's consumer (RedisKeys.bullPrefix). */
  readonly worker: Worker;
  /** One consumer per record queue (RECORD_QUEUES), the first one included. */
  readonly workers: Worker[];
  private probing = false;
  private closing = false;
  private lastVersionWarning = 0;
  private readonly batchVersions: readonly number[];
  private readonly onWritten: ((result: WriteResult) => Promise<void>) | undefined;

  constructor(
    private readonly db: WriterDb,
    connection: RedisClient,
    keys: RedisKeys,
    private readonly metrics: WriterMetrics,
    private readonly log: Logger,
    options: RecordWorkerOptions,
  ) {
    this.batchVersions = options.batchVersions ?? RECORD_BATCH_VERSIONS;
    this.onWritten = options.onWritten;
    metrics.postgresUp.set(1);
    const tracer = options.tracer ?? null;
    const prefixes = Array.from({ length: Math.max(1, options.recordQueues ?? 1) }, (_, shard) => keys.recordsQueuePrefix(shard));
    this.workers = prefixes.map((prefix) => this.consume(connection, keys, prefix, options, tracer));
    this.worker = this.workers[0] as Worker;
  }

  private consume(connection: RedisClient, keys: RedisKeys, prefix: string, options: RecordWorkerOptions, tracer: RecordWorkerOptions['tracer'] | null): Worker {
    const log = this.log;
    const worker = new Worker(keys.recordsQueue, (job) => (tracer === null || tracer === undefined ? this.process(job) : tracer.traceBatch(job, () => this.process(job))), {
      connection,
      prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // A batch that stalls again and again (its writers keep dying) is still never failed.
      maxStalledCount: 2 ** 31 - 1,
      settings: {
        backoffStrategy: (attemptsMade: number, _type?: string, _err?: Error, job?: MinimalJob) => {
          const base = job?.opts.backoff !== undefined && typeof job.opts.backoff === 'object' ? (job.opts.backoff.delay ?? 1_000) : 1_000;
          const delay = Math.min(options.maxBackoffMs, base * 2 ** Math.min(Math.max(attemptsMade - 1, 0), 20));
          return Math.round(delay * (0.8 + Math.random() * 0.4));
        },
      },
    });
    // BullMQ reports every failed reconnect while Redis is away; one line per outage-ish is enough.
    let lastRedisWarning = 0;
    worker.on('error', (err) => {
      const now = Date.now();
      if (now - lastRedisWarning < 10_000) return;
      lastRedisWarning = now;
      log.warn({ err: { message: err.message } }, 'records queue error (Redis unavailable?); the worker keeps retrying');
    });
    return worker;
  }

  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const graceful = Promise.all(this.workers.map((w) => w.close()));
    const timedOut = await Promise.race([
      graceful.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    // A batch cut short here is not lost: its lock expires and another writer writes it.
    if (timedOut) await Promise.all(this.workers.map((w) => w.close(true).catch(() => {})));
  }

  private async process(job: Job): Promise<BatchOutcome> {
    const batch = this.decode(job);
    if (batch === null) return { written: 0, replayed: 0, invalid: 1 };
    const usage = emptyUsageRows();
    const audit = emptyAuditRows();
    const rejected = [...addUsageRows(usage, batch.usage, batch.v), ...addAuditRows(audit, batch.audit, batch.v)];
    const started = performance.now();
    const pool = this.db.current;
    let result;
    try {
      result = await writeBatch(pool.sql, usage, audit, { signal: pool.signal });
    } catch (err) {
      this.metrics.retried.inc();
      if (!isUnavailable(err)) this.log.warn({ err: errorFields(err), job: job.id, attempt: job.attemptsMade + 1 }, 'record batch write failed; it will be retried');
      // A failure on a pool already replaced says nothing about Postgres now.
      else if (pool === this.db.current) this.postgresUnavailable(err);
      throw err;
    }
    this.metrics.batchSeconds.observe((performance.now() - started) / 1000);
    if (this.onWritten && (result.quotaCrossings.length > 0 || result.failedRequestProjects.length > 0)) await this.onWritten(result);
    rejected.push(...result.rejected);
    this.reportInvalid(job, rejected);
    const usageValid = rowCount(usage) - result.rejected.filter((r) => r.table === 'usage_records').length;
    const auditValid = rowCount(audit) - result.rejected.filter((r) => r.table === 'audit_events').length;
    this.metrics.written.inc({ table: 'usage_records' }, result.usageInserted);
    this.metrics.written.inc({ table: 'audit_events' }, result.auditInserted);
    this.metrics.replayed.inc({ table: 'usage_records' }, usageValid - result.usageInserted);
    this.metrics.replayed.inc({ table: 'audit_events' }, auditValid - result.auditInserted);
    this.metrics.batches.inc();
    return {
      written: result.usageInserted + result.auditInserted,
      replayed: usageValid - result.usageInserted + auditValid - result.auditInserted,
      invalid: rejected.length,
    };
  }

  /**
   * A batch of a newer format is thrown back for a newer writer (rolling deploys run both):
   * BullMQ retries it with backoff, never failing it, until a writer that reads it takes it.
   * Anything else unreadable can never be written, so it is counted and completed.
   */
  private decode(job: Job): RecordBatch | null {
    try {
      const batch = decodeRecordBatch(job.data);
      if (!this.batchVersions.includes(batch.v)) throw new ContractError('RecordBatch', `unsupported version ${batch.v}`);
      return batch;
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      const version = peekVersion(job.data);
      if (version !== null && version > Math.max(...this.batchVersions)) {
        const now = Date.now();
        if (now - this.lastVersionWarning > 60_000) {
          this.lastVersionWarning = now;
          this.log.warn({ job: job.id, version }, 'record batch of a newer format; leaving it for a newer writer');
        }
        throw err;
      }
      this.metrics.invalid.inc({ table: 'batch' });
      this.log.warn({ job: job.id, reason: err.message }, 'unreadable record batch dropped');
      return null;
    }
  }

  private reportInvalid(job: Job, rejected: RejectedRecord[]): void {
    if (rejected.length === 0) return;
    for (const r of rejected) this.metrics.invalid.inc({ table: r.table });
    // Ids and reasons only: a record's fields are not for logs.
    this.log.warn({ job: job.id, invalid: rejected.length, examples: rejected.slice(0, 5) }, 'invalid records dropped from batch');
  }

  /**
   * Stops taking batches until Postgres answers a fresh pool, which then replaces the old one
   * (see WriterDb), and resumes.
   */
  private postgresUnavailable(err: unknown): void {
    if (this.probing || this.closing) return;
    this.probing = true;
    this.metrics.postgresUp.set(0);
    this.log.warn({ err: errorFields(err) }, 'postgres unavailable; pausing record writes until it answers');
    for (const w of this.workers) void w.pause(true).catch(() => {});
    const probe = async (delay: number): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.closing) return;
      if (!(await this.db.renew())) return probe(Math.min(delay * 2, PROBE_MAX_MS));
      this.probing = false;
      this.metrics.postgresUp.set(1);
      this.log.info('postgres answers again; resuming record writes');
      for (const w of this.workers) w.resume();
    };
    void probe(PROBE_MIN_MS);
  }
}

function peekVersion(data: unknown): number | null {
  try {
    const b = (data as { b?: unknown } | null)?.b;
    if (typeof b !== 'string') return null;
    const v = (peek.unpack(Buffer.from(b, 'base64')) as { v?: unknown } | null)?.v;
    return typeof v === 'number' ? v : null;
  } catch {
    return null;
  }
}

function errorFields(err: unknown): { code?: string; message: string } {
  const e = err as { code?: string; message?: string };
  return { ...(e.code ? { code: e.code } : {}), message: e.message ?? String(err) };
}
