import type { Registry } from 'prom-client';
import type { AuditEvent, ProxyConfig, RedisKeys, UsageRecord, RedisClient } from '@gateway/shared';
import { BatchAssembler } from './batch-assembler.js';
import { BoundedBacklog } from './bounded-backlog.js';
import { encodeBatch, type OutgoingBatch } from './outgoing-batch.js';
import { recordBufferMetrics, type RecordBufferMetrics } from './record-buffer-metrics.js';
import type { RecordSink } from './record-sink.js';
import { RecordsQueue } from './records-queue.js';
import { RetryBackoff } from './retry-backoff.js';
import { SentBatches } from './sent-batches.js';
import { WriteConfirmation } from './write-confirmation.js';

/** The longest flush timer a caller of queued() waits for rather than cutting the open batch. */
const CUT_FOR_WAITERS_MS = 20;

// Small integers rather than strings: V8 keeps an array of small integers unboxed.
const USAGE = 0;
const AUDIT = 1;
type RecordKind = typeof USAGE | typeof AUDIT;

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
  connection: RedisClient;
  keys: RedisKeys;
  /** BullMQ prefix of the record queue to send to; the first (RedisKeys.bullPrefix) by default. */
  queuePrefix?: string;
  config: Pick<ProxyConfig, 'recordBatchSize' | 'recordFlushMs' | 'recordBufferMax'>;
  registry: Registry;
  log: RecordBufferLog;
  /** Batches being sent at once. */
  maxInFlight?: number;
  /** How often the buffer asks Redis which sent batches a writer has taken. */
  confirmIntervalMs?: number;
}

/**
 * The proxy's RecordSink: records are batched in memory and sent to the records queue as BullMQ
 * jobs, off the request path. While Redis is away the buffer keeps up to recordBufferMax records
 * and retries with backoff; past the bound it drops the oldest, counted and logged.
 *
 * A record is buffered (handed over, in the assembler, or in flight), then sent (kept in
 * SentBatches until a writer is seen to have taken it, so a Redis restart without persistence
 * loses nothing), then let go. Both states count towards the bound. docs/pipeline.md tells the
 * whole story.
 *
 * push() only appends the record to a list: the records handed over during one turn of the event
 * loop are encoded together in the next (setImmediate), a request's audit event and usage record
 * into one compact row, so the objects die young and the request path does none of the encoding.
 * From then on a record is bytes (OutgoingBatch), never an object, until a writer has it.
 */
export class RecordBuffer implements RecordSink {
  private readonly connection: RedisClient;
  private readonly log: RecordBufferLog;
  private readonly metrics: RecordBufferMetrics;
  private readonly maxInFlight: number;
  private readonly assembler: BatchAssembler;
  private readonly queue: RecordsQueue;
  private readonly backoff: RetryBackoff;
  private readonly sent = new SentBatches();
  private readonly backlog: BoundedBacklog;
  private readonly confirmation: WriteConfirmation;

  private handed: (UsageRecord | AuditEvent)[] = [];
  private handedKinds: RecordKind[] = [];
  private encodeScheduled = false;
  private readonly encodeHanded = () => this.encodeHandedRecords();

  private inFlightBatches = 0;
  private inFlightRecords = 0;
  private readonly inFlight = new Set<OutgoingBatch>();
  /** Callers of queued(), each with the batches its records are in that are not in Redis yet. */
  private waiters: { batches: Set<OutgoingBatch>; resolve: () => void }[] = [];
  /** RECORD_FLUSH_MS is long enough that a caller of queued() should not wait for it: the open batch is cut for it. */
  private readonly cutForWaiters: boolean;
  private closing = false;
  private closed = false;
  private readonly onReady = () => {
    this.backoff.skipWait();
    this.pump();
    void this.confirmation.check();
  };

  constructor(options: RecordBufferOptions) {
    this.connection = options.connection;
    this.log = options.log;
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 4);
    this.metrics = recordBufferMetrics(options.registry, {
      buffered: () => this.buffered,
      unconfirmed: () => this.sent.records,
    });
    this.cutForWaiters = options.config.recordFlushMs > CUT_FOR_WAITERS_MS;
    this.assembler = new BatchAssembler(Math.max(1, options.config.recordBatchSize), Math.max(1, options.config.recordFlushMs), () => this.pump());
    this.backlog = new BoundedBacklog(Math.max(1, options.config.recordBufferMax));
    this.backoff = new RetryBackoff(() => this.pump());
    this.queue = new RecordsQueue(this.connection, options.keys, options.queuePrefix);
    this.confirmation = new WriteConfirmation({
      connection: this.connection,
      sent: this.sent,
      jobKey: (id) => this.queue.jobKey(id),
      intervalMs: options.confirmIntervalMs ?? 1_000,
      resend: (batches) => this.resend(batches),
    });
    this.connection.on('ready', this.onReady);
    if (this.connection.status === 'ready') void this.confirmation.check();
  }

  pushUsage(record: UsageRecord): void {
    this.push(USAGE, record);
  }

  pushAudit(event: AuditEvent): void {
    this.push(AUDIT, event);
  }

  /**
   * Resolves once the records pushed so far are in Redis (or dropped): the batches they are in
   * have each been acknowledged once. The open batch is not cut for it (it is cut within
   * RECORD_FLUSH_MS anyway), so the records keep going out in full batches, unless
   * RECORD_FLUSH_MS is longer than CUT_FOR_WAITERS_MS: a batch's pages would then wait for it.
   */
  queued(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.encodeHandedRecords();
    if (this.cutForWaiters) this.assembler.cut();
    const batches = new Set<OutgoingBatch>([...this.assembler.waitingBatches(), ...this.inFlight]);
    const open = this.assembler.openBatch();
    if (open !== null) batches.add(open);
    for (const batch of batches) if (isSettled(batch)) batches.delete(batch);
    if (batches.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiters.push({ batches, resolve });
      this.pump();
    });
  }

  /** Cuts the open batch and resolves once everything buffered is in Redis, or at the timeout. */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.encodeHandedRecords();
    this.assembler.cut();
    this.backoff.skipWait();
    this.pump();
    // The connection's 'ready' event cuts any backoff short, so waiting here is enough.
    while (this.buffered > 0 && Date.now() < deadline) {
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
    // What was not sent now never will be: no one waits for it.
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters = [];
    this.assembler.stop();
    this.backoff.stop();
    this.confirmation.stop();
    this.connection.off('ready', this.onReady);
    const lost = this.buffered;
    if (lost > 0) {
      this.metrics.dropped.inc(lost);
      this.log.warn({ dropped: lost }, 'record buffer closed before Redis took every record; unsent records dropped');
    }
    // Closing the queue waits for the connection when Redis is away; the deadline bounds that.
    await Promise.race([this.queue.close(), new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
  }

  /** Records not yet in Redis (for tests and the drain log). */
  get buffered(): number {
    return this.handed.length + this.assembler.records + this.inFlightRecords;
  }

  private push(kind: RecordKind, record: UsageRecord | AuditEvent): void {
    if (this.closed) {
      this.metrics.dropped.inc();
      return;
    }
    this.handed.push(record);
    this.handedKinds.push(kind);
    if (!this.encodeScheduled) {
      this.encodeScheduled = true;
      setImmediate(this.encodeHanded);
    }
  }

  /** The records handed over since the last turn, into rows: an audit event and the usage record after it with the same id share one. */
  private encodeHandedRecords(): void {
    this.encodeScheduled = false;
    const records = this.handed;
    const kinds = this.handedKinds;
    if (records.length === 0) return;
    this.handed = [];
    this.handedKinds = [];
    // close() has counted what it found here as dropped.
    if (this.closed) return;
    for (let i = 0; i < records.length; i++) {
      let audit: AuditEvent | null = null;
      let usage: UsageRecord | null = null;
      if (kinds[i] === AUDIT) {
        audit = records[i] as AuditEvent;
        if (kinds[i + 1] === USAGE && (records[i + 1] as UsageRecord).id === audit.id) usage = records[++i] as UsageRecord;
      } else usage = records[i] as UsageRecord;
      try {
        this.assembler.add(audit, usage);
        this.enforceBound();
        this.assembler.cutWhenDue();
      } catch (err) {
        // Record keeping never fails a request; this is a bug to log, not to throw.
        this.log.warn({ err: { message: (err as Error).message } }, 'record buffer could not take a record');
      }
    }
  }

  private pump(): void {
    if (this.closed) return;
    // While the connection is down, batches wait in the assembler rather than in the client's
    // offline queue, where they could be neither merged nor dropped; 'ready' pumps again.
    if (this.connection.status !== 'ready') return;
    if (this.backoff.waiting()) return;
    while (this.inFlightBatches < this.maxInFlight) {
      const batch = this.assembler.next();
      if (batch === undefined) return;
      this.send(batch);
    }
  }

  private send(batch: OutgoingBatch): void {
    batch.attempted = true;
    const size = batch.size;
    let data;
    try {
      data = encodeBatch(batch);
    } catch (err) {
      // A record msgpack cannot encode can never be sent; keeping it would block the buffer.
      this.metrics.dropped.inc(size);
      this.log.warn({ err: { message: (err as Error).message }, dropped: size }, 'record batch could not be encoded; dropped');
      batch.dropped = true;
      this.settled(batch);
      return;
    }
    this.inFlightBatches++;
    this.inFlightRecords += size;
    this.inFlight.add(batch);
    this.queue.add(batch.id, data).then(
      () => this.sendSucceeded(batch, size),
      (err: Error) => this.sendFailed(batch, size, err),
    );
  }

  private sendSucceeded(batch: OutgoingBatch, size: number): void {
    this.inFlightBatches--;
    this.inFlightRecords -= size;
    this.inFlight.delete(batch);
    if (batch.counted) this.metrics.resent.inc(size);
    else this.metrics.enqueued.inc(size);
    batch.counted = true;
    this.sent.add(batch);
    const failures = this.backoff.succeeded();
    if (failures > 0) this.log.info({ retries: failures, buffered: this.buffered }, 'records queue reachable again; sending buffered records');
    this.enforceBound();
    this.settled(batch);
    this.pump();
  }

  private sendFailed(batch: OutgoingBatch, size: number, err: Error): void {
    this.metrics.retried.inc();
    // close() has counted this batch as dropped already; it stays counted as buffered, unsent.
    if (this.closed) return;
    this.inFlightBatches--;
    this.inFlightRecords -= size;
    this.inFlight.delete(batch);
    this.queue.renewIfBroken();
    this.assembler.putBack([batch]);
    if (this.backoff.failuresInARow === 0) {
      this.log.warn({ err: { message: err.message }, buffered: this.buffered }, 'records queue unreachable; buffering records and retrying');
    }
    this.backoff.failed();
    this.enforceBound();
    this.pump();
  }

  private resend(batches: OutgoingBatch[]): void {
    this.assembler.putBack(batches);
    const records = batches.reduce((n, batch) => n + batch.size, 0);
    this.log.warn({ batches: batches.length, records }, 'Redis restarted or failed over; re-sending records no writer has confirmed');
    this.pump();
  }

  private enforceBound(): void {
    const { released, dropped, dropsToLog } = this.backlog.trim(this.buffered + this.sent.records, {
      releaseOldestSent: () => this.sent.releaseOldest()?.size,
      dropOldestUnsent: (max) => {
        const oldest = this.assembler.oldest();
        const n = this.assembler.dropOldest(max);
        // A batch dropped whole will never be sent: no one waits for it.
        if (oldest !== null && oldest.size === 0) this.settled(oldest);
        return n;
      },
    });
    if (released > 0) this.metrics.released.inc(released);
    if (dropped > 0) this.metrics.dropped.inc(dropped);
    if (dropsToLog > 0) {
      this.log.warn({ dropped: dropsToLog, buffered: this.buffered, max: this.backlog.max }, 'record buffer full while Redis is away; oldest records dropped');
    }
  }

  /**
   * The batch (and those merged into it) reached Redis or will never be sent: each caller of
   * queued() stops waiting for it, and is let go once it waits for none. The work is the few
   * waiters' set deletions, whatever number of batches the buffer holds.
   */
  private settled(batch: OutgoingBatch): void {
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => {
      waiter.batches.delete(batch);
      if (batch.merged !== null) for (const inner of batch.merged) waiter.batches.delete(inner);
      if (waiter.batches.size > 0) return true;
      waiter.resolve();
      return false;
    });
  }
}

/** In Redis once (a re-send after a restart counts as sent), or nothing left of it to send; a merged batch as the one it joined. */
function isSettled(batch: OutgoingBatch): boolean {
  let b = batch;
  while (b.mergedInto !== null) b = b.mergedInto;
  return b.counted || b.dropped || b.size === 0;
}
