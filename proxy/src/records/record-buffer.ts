import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { encodeRecordBatch, newRecordId, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, type AuditEvent, type ProxyConfig, type RedisKeys, type UsageRecord } from '@gateway/shared';
import { Fifo } from './fifo.js';
import { recordBufferMetrics, type RecordBufferMetrics } from './record-buffer-metrics.js';
import type { RecordSink } from './record-sink.js';

/** The part of a pino logger the buffer uses. */
export interface RecordBufferLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RecordBufferOptions {
  /**
   * A connected ioredis client (BullMQ under ESM takes a constructed client). Owned by the caller,
   * who quits it after close(). With maxRetriesPerRequest null a send waits out a short outage in
   * the client's offline queue; with a number it fails and the buffer retries it.
   */
  connection: Redis;
  keys: RedisKeys;
  config: Pick<ProxyConfig, 'recordBatchSize' | 'recordFlushMs' | 'recordBufferMax'>;
  registry: Registry;
  log: RecordBufferLog;
  /** Batches being sent at once. */
  maxInFlight?: number;
  /** How often the buffer asks Redis which sent batches a writer has taken. */
  confirmIntervalMs?: number;
}

const JOB_OPTIONS: Omit<JobsOptions, 'jobId'> = RECORD_JOB_OPTIONS;

const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 5_000;
const CONFIRM_CHECK_MAX = 500;
const DROP_LOG_EVERY_MS = 10_000;

const USAGE = 0;
const AUDIT = 1;
type Kind = typeof USAGE | typeof AUDIT;

/**
 * One BullMQ job's worth of records. Its id becomes the jobId when the batch is cut and never
 * changes, so a batch sent twice (a lost reply, a retry, a re-send after a Redis restart) is one
 * job in Redis, or at worst a replay the writer's idempotent insert absorbs.
 */
class Batch {
  readonly records: (UsageRecord | AuditEvent)[] = [];
  readonly kinds: Kind[] = [];
  /** Handed to Redis at least once: its records may be in a job under this id, so no more join it. */
  attempted = false;
  /** Counted in enqueued_total already (a re-send is counted as resent instead). */
  counted = false;
  /** Redis run_id known when the add was acknowledged; another run_id means the job may be gone. */
  sentRunId: string | undefined;

  constructor(readonly id: string) {}

  get size(): number {
    return this.records.length;
  }

  add(kind: Kind, record: UsageRecord | AuditEvent): void {
    this.records.push(record);
    this.kinds.push(kind);
  }

  append(other: Batch): void {
    for (let i = 0; i < other.records.length; i++) this.add(other.kinds[i] as Kind, other.records[i] as UsageRecord | AuditEvent);
  }

  dropOldest(count: number): number {
    const n = Math.min(count, this.records.length);
    this.records.splice(0, n);
    this.kinds.splice(0, n);
    return n;
  }

  encode() {
    const usage: UsageRecord[] = [];
    const audit: AuditEvent[] = [];
    for (let i = 0; i < this.records.length; i++) {
      if (this.kinds[i] === USAGE) usage.push(this.records[i] as UsageRecord);
      else audit.push(this.records[i] as AuditEvent);
    }
    return encodeRecordBatch(usage, audit);
  }
}

/**
 * The proxy's RecordSink: records are batched in memory and sent to the records queue as BullMQ
 * jobs, off the request path. While Redis is away the buffer keeps up to recordBufferMax records
 * and retries with backoff; past the bound it drops the oldest, counted and logged.
 *
 * Redis may run without persistence (DESIGN §1), so a job acknowledged by Redis is not yet safe:
 * sent batches stay in memory ("unconfirmed") until their job is gone from Redis under the same
 * run_id, which with removeOnComplete means a writer committed it. If Redis comes back with
 * another run_id, every unconfirmed batch is sent again. Unconfirmed records count towards the
 * bound and are let go first, since they are most likely safe already.
 */
export class RecordBuffer implements RecordSink {
  private queue: Queue;
  private readonly keys: RedisKeys;
  private readonly connection: Redis;
  private readonly metrics: RecordBufferMetrics;
  private readonly log: RecordBufferLog;
  private readonly batchSize: number;
  private readonly flushMs: number;
  private readonly max: number;
  private readonly maxInFlight: number;
  private readonly confirmIntervalMs: number;

  private open: Batch | null = null;
  private readonly pending = new Fifo<Batch>();
  private readonly inFlight = new Set<Batch>();
  private readonly unconfirmed = new Fifo<Batch>();
  /** Records in open + pending + in-flight batches: not yet acknowledged by Redis. */
  private bufferedRecords = 0;
  private unconfirmedRecords = 0;

  private flushTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private confirmTimer: NodeJS.Timeout | null = null;
  private confirming = false;
  private failures = 0;
  private retryAt = 0;
  private runId: string | undefined;
  private droppedSinceLog = 0;
  private lastDropLog = 0;
  private closing = false;
  private closed = false;
  private readonly onReady = () => {
    this.retryAt = 0;
    this.pump();
    void this.confirm();
  };

  constructor(options: RecordBufferOptions) {
    this.connection = options.connection;
    this.log = options.log;
    this.batchSize = Math.max(1, options.config.recordBatchSize);
    this.flushMs = Math.max(1, options.config.recordFlushMs);
    this.max = Math.max(1, options.config.recordBufferMax);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 4);
    this.confirmIntervalMs = options.confirmIntervalMs ?? 1_000;
    this.metrics = recordBufferMetrics(options.registry, {
      buffered: () => this.bufferedRecords,
      unconfirmed: () => this.unconfirmedRecords,
    });
    this.keys = options.keys;
    this.queue = this.newQueue();
    this.connection.on('ready', this.onReady);
    this.confirmTimer = setInterval(() => void this.confirm(), this.confirmIntervalMs);
    this.confirmTimer.unref();
    if (this.connection.status === 'ready') void this.confirm();
  }

  pushUsage(record: UsageRecord): void {
    this.push(USAGE, record);
  }

  pushAudit(event: AuditEvent): void {
    this.push(AUDIT, event);
  }

  /** Cuts the open batch and resolves once everything buffered is in Redis, or at the timeout. */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.cut();
    this.retryAt = 0;
    this.pump();
    // The connection's 'ready' event cuts any backoff short, so waiting here is enough.
    while (this.bufferedRecords > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(10, Math.max(1, deadline - Date.now()))));
    }
  }

  /** Flushes, then stops. Records still unsent at the deadline are counted as dropped. */
  async close(timeoutMs: number): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const deadline = Date.now() + timeoutMs;
    await this.flush(timeoutMs);
    this.closed = true;
    for (const timer of [this.flushTimer, this.retryTimer, this.confirmTimer]) if (timer) clearTimeout(timer);
    this.connection.off('ready', this.onReady);
    const lost = this.bufferedRecords;
    if (lost > 0) {
      this.metrics.dropped.inc(lost);
      this.log.warn({ dropped: lost }, 'record buffer closed before Redis took every record; unsent records dropped');
    }
    // Queue#close waits for the connection when Redis is away; the deadline bounds that.
    await Promise.race([this.queue.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
  }

  /** Records not yet in Redis (for tests and the drain log). */
  get buffered(): number {
    return this.bufferedRecords;
  }

  private newQueue(): Queue {
    const queue = new Queue(this.keys.recordsQueue, { connection: this.connection, prefix: this.keys.bullPrefix });
    // The queue re-emits connection errors; the owner of the connection logs those.
    queue.on('error', () => {});
    return queue;
  }

  /**
   * A BullMQ queue whose start-up check failed (Redis went away in that moment) rejects every add
   * from then on; a fresh one over the same connection starts clean.
   */
  private renewQueueIfBroken(): void {
    const queue = this.queue;
    queue.waitUntilReady().catch(() => {
      if (this.closed || this.queue !== queue) return;
      this.queue = this.newQueue();
      void queue.close().catch(() => {});
    });
  }

  private push(kind: Kind, record: UsageRecord | AuditEvent): void {
    try {
      if (this.closed) {
        this.metrics.dropped.inc();
        return;
      }
      if (this.open === null) this.open = new Batch(newRecordId());
      this.open.add(kind, record);
      this.bufferedRecords++;
      this.enforceBound();
      if (this.open !== null && this.open.size >= this.batchSize) this.cut();
      else if (this.flushTimer === null) this.flushTimer = setTimeout(() => this.cut(), this.flushMs);
    } catch (err) {
      // The request path must never see a failure of record keeping.
      this.log.warn({ err: { message: (err as Error).message } }, 'record buffer push failed');
    }
  }

  private cut(): void {
    if (this.flushTimer !== null) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const open = this.open;
    if (open === null || open.size === 0) return;
    this.open = null;
    const last = this.pending.last();
    // While Redis is away, small batches cut every flushMs join the newest waiting one, so the
    // buffer holds few full batches and sends few jobs once Redis is back.
    if (last !== undefined && !last.attempted && last.size + open.size <= this.batchSize) last.append(open);
    else this.pending.push(open);
    this.pump();
  }

  private pump(): void {
    if (this.closed) return;
    // While the connection is down, batches wait here rather than in the client's offline queue,
    // where they could be neither merged nor dropped; 'ready' pumps again.
    if (this.connection.status !== 'ready') return;
    const now = Date.now();
    if (now < this.retryAt) {
      this.scheduleRetry(this.retryAt - now);
      return;
    }
    while (this.inFlight.size < this.maxInFlight && this.pending.length > 0) {
      const batch = this.pending.shift() as Batch;
      if (batch.size === 0) continue;
      this.send(batch);
    }
  }

  private scheduleRetry(delayMs: number): void {
    if (this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pump();
    }, delayMs);
  }

  private send(batch: Batch): void {
    batch.attempted = true;
    this.inFlight.add(batch);
    const size = batch.size;
    let data;
    try {
      data = batch.encode();
    } catch (err) {
      // A record msgpack cannot encode can never be sent; keeping it would block the buffer.
      this.inFlight.delete(batch);
      this.bufferedRecords -= size;
      this.metrics.dropped.inc(size);
      this.log.warn({ err: { message: (err as Error).message }, dropped: size }, 'record batch could not be encoded; dropped');
      return;
    }
    this.queue.add(RECORD_JOB_NAME, data, { ...JOB_OPTIONS, jobId: batch.id }).then(
      () => this.sent(batch, size),
      (err: Error) => this.sendFailed(batch, err),
    );
  }

  private sent(batch: Batch, size: number): void {
    this.inFlight.delete(batch);
    this.bufferedRecords -= size;
    if (batch.counted) this.metrics.resent.inc(size);
    else this.metrics.enqueued.inc(size);
    batch.counted = true;
    batch.sentRunId = this.runId;
    this.unconfirmed.push(batch);
    this.unconfirmedRecords += size;
    if (this.failures > 0) {
      this.log.info({ retries: this.failures, buffered: this.bufferedRecords }, 'records queue reachable again; sending buffered records');
      this.failures = 0;
    }
    this.enforceBound();
    this.pump();
  }

  private sendFailed(batch: Batch, err: Error): void {
    this.inFlight.delete(batch);
    this.metrics.retried.inc();
    if (this.closed) return;
    this.renewQueueIfBroken();
    this.pending.unshift(batch);
    if (this.failures === 0) {
      this.log.warn({ err: { message: err.message }, buffered: this.bufferedRecords }, 'records queue unreachable; buffering records and retrying');
    }
    this.failures++;
    const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(this.failures - 1, 16));
    this.retryAt = Date.now() + Math.round(delay * (0.8 + Math.random() * 0.4));
    this.enforceBound();
    this.pump();
  }

  /** Keeps buffered + unconfirmed within the bound: unconfirmed first, then the oldest unsent. */
  private enforceBound(): void {
    let excess = this.bufferedRecords + this.unconfirmedRecords - this.max;
    let dropped = 0;
    while (excess > 0) {
      const oldestSent = this.unconfirmed.shift();
      if (oldestSent !== undefined) {
        this.unconfirmedRecords -= oldestSent.size;
        this.metrics.released.inc(oldestSent.size);
        excess -= oldestSent.size;
        continue;
      }
      // Batches in flight may already be in Redis; the oldest droppable records are at the front
      // of the pending queue, then in the open batch.
      const oldest = this.pending.first() ?? this.open;
      if (oldest === undefined || oldest === null) break;
      const n = oldest.dropOldest(excess);
      if (oldest.size === 0) {
        if (oldest === this.open) this.open = null;
        else this.pending.shift();
      }
      if (n === 0) break;
      this.bufferedRecords -= n;
      dropped += n;
      excess -= n;
    }
    if (dropped > 0) this.noteDropped(dropped);
  }

  private noteDropped(n: number): void {
    this.metrics.dropped.inc(n);
    this.droppedSinceLog += n;
    const now = Date.now();
    if (now - this.lastDropLog >= DROP_LOG_EVERY_MS) {
      this.log.warn({ dropped: this.droppedSinceLog, buffered: this.bufferedRecords, max: this.max }, 'record buffer full while Redis is away; oldest records dropped');
      this.droppedSinceLog = 0;
      this.lastDropLog = now;
    }
  }

  /**
   * Asks Redis, in one MULTI, for its run_id and whether the oldest unconfirmed jobs still exist.
   * A transaction's replies all come from the one server that ran EXEC (a pipeline cut by a
   * reconnect could mix two), so "gone under the run_id it was added to" means completed, never
   * lost.
   */
  private async confirm(): Promise<void> {
    if (this.confirming || this.closed || this.connection.status !== 'ready') return;
    this.confirming = true;
    try {
      const checked: Batch[] = [];
      for (let i = 0; i < CONFIRM_CHECK_MAX && i < this.unconfirmed.length; i++) checked.push(this.unconfirmed.at(i) as Batch);
      const pipeline = this.connection.multi().info('server');
      for (const batch of checked) pipeline.exists(this.queue.toKey(batch.id));
      const replies = (await pipeline.exec()) ?? [];
      const [infoErr, info] = replies[0] ?? [new Error('no reply'), null];
      if (infoErr || typeof info !== 'string') return;
      const runId = /run_id:(\w+)/.exec(info)?.[1];
      if (runId === undefined) return;
      const restarted = runId !== this.runId;
      this.runId = runId;
      // Entries may have been released by the bound while the pipeline ran; match by identity.
      const gone = new Set<Batch>();
      checked.forEach((batch, i) => {
        const [err, exists] = replies[i + 1] ?? [new Error('no reply'), null];
        if (!err && exists === 0 && batch.sentRunId === runId) gone.add(batch);
      });
      this.settleUnconfirmed(runId, gone, restarted ? this.unconfirmed.length : checked.length);
    } catch {
      // Redis went away mid-check; the next tick asks again.
    } finally {
      this.confirming = false;
    }
  }

  /**
   * Releases the confirmed batches and queues for re-send those sent under another run_id. Only
   * the first `scan` entries are looked at: when the run_id is unchanged, later entries were all
   * sent under it and none of them was checked.
   */
  private settleUnconfirmed(runId: string, gone: Set<Batch>, scan: number): void {
    const keep: Batch[] = [];
    const resend: Batch[] = [];
    for (let i = 0; i < scan; i++) {
      const batch = this.unconfirmed.shift();
      if (batch === undefined) break;
      if (gone.has(batch)) this.unconfirmedRecords -= batch.size;
      else if (batch.sentRunId !== runId) resend.push(batch);
      else keep.push(batch);
    }
    for (let i = keep.length - 1; i >= 0; i--) this.unconfirmed.unshift(keep[i] as Batch);
    if (resend.length === 0) return;
    let records = 0;
    for (let i = resend.length - 1; i >= 0; i--) {
      const b = resend[i] as Batch;
      records += b.size;
      this.pending.unshift(b);
    }
    this.unconfirmedRecords -= records;
    this.bufferedRecords += records;
    this.log.warn({ batches: resend.length, records }, 'Redis restarted or failed over; re-sending records no writer has confirmed');
    this.pump();
  }
}
