import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, Job, Queue, Worker } from 'bullmq';
import { BATCH_EXPIRED, Errors, type GatewayError, type BatchJob, type BatchRow, type ClaimedLine, type LineResult, type RedisClient, type RedisKeys } from '@gateway/shared';
import type { Logger } from 'pino';
import type { GatewayDeps } from '../pipeline/context.js';
import type { Endpoints } from '../pipeline/endpoints.js';
import type { InFlightEntry, Revocable } from '../auth/in-flight.js';
import type { BatchStore } from './batch-store.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import { runLine, type LineAnswer, type RunningLine } from './batch-line.js';
import { LineFeed } from './line-feed.js';
import { answerUnanswered, batchesOf, collect, HandOffs } from './provider-batch-run.js';

/**
 * Runs batches: one BullMQ job per batch on the batches queue, taken by any proxy; a proxy that
 * dies mid-batch loses its lock and another takes the job over, going on from the lines not
 * answered yet (the control plane keeps every line's answer, and a line answered once keeps that
 * answer). Lines run `BATCH_LINE_CONCURRENCY` at a time through their endpoint's own chain
 * (batch-line.ts); a line the gateway refuses for now (RATE_LIMITED, a 503 to retry) waits as
 * asked and runs again, so a batch goes as fast as the project's rate limits allow; a provider
 * that fails is tried again a few times before the line is answered with its error. A line whose
 * provider runs batches itself (`batch: native`) is handed to it instead (provider-batch-run.ts),
 * and the job then waits BATCH_POLL_MS between polls until those provider batches are collected.
 * A deleted key stops the batch at its next line: the lines not answered end `UNAUTHORIZED` and
 * the batch `cancelled`.
 */
const CLAIM_PAGE = 500;
const RESULTS_PAGE = 100;
const CHECK_MS = 1_000;
const PROVIDER_RETRIES = 3;
/** A wait asked for by a line's answer is honoured up to this, then the line is tried again anyway. */
const MAX_WAIT_MS = 60_000;

/** A batch run's end: it ended, or lines are with a provider's own batch and it is run again at the next poll. */
type RunOutcome = 'ended' | { waiting: true; batch: BatchRow };

/**
 * A batch waiting for its provider batches, registered with the requests in flight under its key
 * and project: deleting either wakes it (the run then cancels its provider batches), as it ends
 * the key's streams. Other revocations (a proxy draining) leave it to its poll.
 */
class WaitingBatch implements Revocable {
  inFlightEntry: InFlightEntry | null = null;
  readonly keyId: string;
  readonly projectId: string;

  constructor(
    batch: BatchRow,
    private readonly wake: () => void,
  ) {
    this.keyId = batch.key_id;
    this.projectId = batch.project_id;
  }

  revoke(reason?: GatewayError): void {
    if (reason === undefined || reason.code === 'UNAUTHORIZED') this.wake();
  }
}

async function wakeJob(queue: Queue, batchId: string): Promise<void> {
  try {
    const job = await Job.fromId(queue, batchId);
    if (job !== undefined && (await job.isDelayed())) await job.promote();
  } catch {
    // The next poll runs it anyway.
  }
}

export class BatchQueue {
  private readonly queue: Queue;

  constructor(connection: RedisClient, keys: RedisKeys) {
    this.queue = new Queue(keys.batchesQueue, { connection, prefix: keys.bullPrefix });
  }

  /** Adds the batch's job (adding it again while it is queued or running changes nothing). */
  async add(batchId: string): Promise<void> {
    await this.queue.add('batch', { v: 1, batch_id: batchId } satisfies BatchJob, { jobId: batchId, removeOnComplete: true, removeOnFail: 1_000, attempts: 1_000, backoff: { type: 'exponential', delay: 1_000 } });
  }

  /**
   * Runs a batch waiting for its provider's batch now rather than at its next poll (it was
   * cancelled, or its key deleted, so its provider's batch is cancelled without delay). Best
   * effort: a batch not waiting is left as it is, and a failure waits for the next poll.
   */
  wake(batchId: string): void {
    void wakeJob(this.queue, batchId);
  }

  /** Bounded: with Redis away, BullMQ's close would wait for it; the connection is the caller's. */
  async close(timeoutMs: number): Promise<void> {
    await waitAtMost(this.queue.close(), timeoutMs);
  }
}

export class BatchRunner {
  private readonly worker: Worker;
  private closing = false;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly store: BatchStore,
    private readonly chains: Endpoints['lines'],
    connection: RedisClient,
    keys: RedisKeys,
    private readonly log: Logger,
  ) {
    const { config } = deps;
    this.worker = new Worker(keys.batchesQueue, (job: Job<BatchJob>, token?: string) => this.track(this.process(job, token)), {
      connection,
      prefix: keys.bullPrefix,
      concurrency: 4,
      lockDuration: config.batchLockMs,
      stalledInterval: config.batchLockMs,
      // A batch whose runners keep dying is never given up: its lines are answered once however often.
      maxStalledCount: 2 ** 31 - 1,
    });
    this.worker.on('failed', (job, err) => this.log.warn({ batch: job?.data.batch_id, err: err.message }, 'batch run failed; it will be retried'));
    this.worker.on('error', (err) => this.log.warn({ err: err.message }, 'batch worker error'));
  }

  /**
   * Lines in flight end first (their records go with the rest). The worker is then closed without
   * BullMQ's own wait, which with Redis away would last until Redis came back: a job still held is
   * left to its lock's expiry and another proxy.
   */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    await waitAtMost(Promise.allSettled([...this.running]), timeoutMs);
    await waitAtMost(this.worker.close(true), 2_000);
  }

  private track(run: Promise<void>): Promise<void> {
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => {});
    return run;
  }

  /**
   * A job's run: while lines are with a provider's own batch, the job waits BATCH_POLL_MS in the
   * queue's delayed set (holding no worker slot and no lock) and is run again, any proxy's.
   */
  private async process(job: Job<BatchJob>, token: string | undefined): Promise<void> {
    const outcome = await this.runBatch(job.data.batch_id);
    if (outcome === 'ended') return;
    const pollMs = this.deps.config.batchPollMs;
    await job.moveToDelayed(Date.now() + pollMs, token);
    // Until the next poll, a deletion of the batch's key (or project) seen here runs it at once.
    const waiting = new WaitingBatch(outcome.batch, () => void job.promote().catch(() => {}));
    this.deps.inFlight.add(waiting);
    setTimeout(() => this.deps.inFlight.remove(waiting), pollMs + CHECK_MS).unref();
    throw new DelayedError();
  }

  /** Runs a batch to its end, or until its lines are with providers (or this proxy stops: the job is then taken over). */
  async runBatch(batchId: string): Promise<RunOutcome> {
    const found = await this.store.run(batchId);
    if (found === null) return 'ended';
    const { batch, key_hash: keyHash } = found;
    if (ended(batch.status)) return 'ended';
    // Lines with a provider are stopped there first (a deleted key's at once, a cancelled batch's answers made are collected).
    if (keyHash === null || (batch.status === 'cancelling' && batch.reason?.code === 'UNAUTHORIZED')) {
      await this.stopSubmissions(batch);
      return this.end(batch, true);
    }
    if (pastWindow(batch)) {
      await this.stopSubmissions(batch);
      return this.expire(batch);
    }
    const run = new BatchRun(this, batch, keyHash);
    if (batch.status === 'cancelling') {
      run.stop = 'cancelled';
      return (await this.poll(run)) ? this.end(batch, false) : { waiting: true, batch };
    }
    const handOffs = new HandOffs(this.deps, this.store, this.chains.collect, run, this.log);
    // A cancel (or the key's deletion) made anywhere is seen within a second, lines in flight included.
    const watch = setInterval(() => void run.check(), CHECK_MS);
    try {
      await run.lines(new LineFeed(this.store, batch.id, CLAIM_PAGE), handOffs);
    } finally {
      clearInterval(watch);
    }
    if (this.closing && run.stop === null) throw Errors.shuttingDown();
    if (run.stop === 'key') {
      await this.stopSubmissions(batch);
      return this.end(batch, true);
    }
    if (run.stop === 'expired') {
      await this.stopSubmissions(batch);
      return this.expire(batch);
    }
    if (!(await this.poll(run))) return { waiting: true, batch };
    if (run.stop === 'cancelled') return this.end({ ...batch, status: 'cancelling' }, false);
    await this.store.finish(batch.id, { outcome: 'completed', reason: null, unanswered: null });
    return 'ended';
  }

  /**
   * The batch's provider batches, each asked once how it goes: an ended one is collected; a
   * stopped batch's are cancelled at their provider first. True once none is left open.
   */
  private async poll(run: BatchRun): Promise<boolean> {
    const open = (await this.store.submissions(run.batch.id)).filter((s) => s.status === 'submitted');
    let left = 0;
    for (const submission of open) {
      const batches = batchesOf(this.deps, submission.provider);
      if (batches === null) {
        // The providers file no longer has this provider's batch API: its lines are answered as failed.
        this.log.warn({ batch: run.batch.id, provider: submission.provider }, 'provider batch cannot be reached: the provider no longer runs batches');
        if (!(await answerUnanswered(this.deps, this.store, this.chains.collect, run, submission, Errors.providerFailed(submission.provider).message))) {
          left++;
          continue;
        }
        await run.stored();
        await this.store.endSubmission(run.batch.id, submission.id, 'cancelled');
        continue;
      }
      try {
        if (run.stop !== null) await batches.cancel(submission.upstream_id);
        if (!(await batches.ended(submission.upstream_id))) {
          left++;
          continue;
        }
        const whole = await collect(this.deps, this.store, this.chains.collect, run, submission, batches);
        await run.stored();
        if (!whole) {
          left++;
          continue;
        }
        await this.store.endSubmission(run.batch.id, submission.id, 'collected');
      } catch (err) {
        // A provider away for now (or the control plane): asked again at the next poll.
        this.log.warn({ batch: run.batch.id, provider: submission.provider, err: (err as Error).message }, 'provider batch not polled; asking again at the next poll');
        left++;
      }
    }
    return left === 0;
  }

  /** Cancels the batch's open provider batches and collects nothing more from them (a deleted key, a window past). */
  private async stopSubmissions(batch: BatchRow): Promise<void> {
    const open = (await this.store.submissions(batch.id)).filter((s) => s.status === 'submitted');
    for (const submission of open) {
      const batches = batchesOf(this.deps, submission.provider);
      await batches?.cancel(submission.upstream_id).catch((err: unknown) => this.log.warn({ batch: batch.id, provider: submission.provider, err: (err as Error).message }, 'provider batch not cancelled'));
      await this.store.endSubmission(batch.id, submission.id, 'cancelled');
    }
  }

  private async end(batch: BatchRow, keyGone: boolean): Promise<'ended'> {
    if (ended(batch.status)) return 'ended';
    const reason = keyGone ? { code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' } : (batch.reason ?? null);
    await this.store.finish(batch.id, {
      outcome: 'cancelled',
      reason,
      unanswered: keyGone ? { status_code: 401, code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted before this line ran.' } : null,
    });
    return 'ended';
  }

  /** The completion window passed: the lines not answered end `batch_expired`, the answers made are kept. */
  private async expire(batch: BatchRow): Promise<'ended'> {
    await this.store.finish(batch.id, { outcome: 'expired', reason: BATCH_EXPIRED, unanswered: { status_code: 408, ...BATCH_EXPIRED } });
    return 'ended';
  }

  get stopping(): boolean {
    return this.closing;
  }

  /** One line, tried again while the gateway asks it to wait; null when the batch stops first. */
  /** `handOff`: false to run the line here even when its provider runs batches. */
  async answer(run: BatchRun, line: ClaimedLine, body: Buffer, handOff = true): Promise<LineAnswer | null> {
    let providerFailures = 0;
    for (let attempt = 0; ; attempt++) {
      if (!run.going) return null;
      // The hand-off chain: a line whose provider runs batches itself goes to it (provider-line-steps.ts).
      const running: RunningLine = runLine(this.deps, this.chains.handOff[run.batch.endpoint], run.batch, run.keyHash, line, body, attempt, null, handOff);
      run.inFlight.add(running);
      const answered = await running.answer;
      run.inFlight.delete(running);
      if (answered.handedOff !== null) return answered;
      if (!run.going) return answered.errorCode === 'UNAUTHORIZED' || answered.status === CLIENT_CLOSED ? null : answered;
      const wait = waitFor(answered, providerFailures);
      if (wait === null) return answered;
      if (isProviderFailure(answered)) providerFailures++;
      await sleep(wait);
    }
  }

  get concurrency(): number {
    return this.deps.config.batchLineConcurrency;
  }

  get batchStore(): BatchStore {
    return this.store;
  }

  /** Resolves once the records of every line answered so far are in Redis. */
  recordsQueued(): Promise<void> {
    return this.deps.records.queued();
  }
}

/** Why a batch stopped before its last line: cancelled, its key deleted, its window passed, or (null) it did not. */
type Stop = 'cancelled' | 'key' | 'expired' | null;

/**
 * One batch being run on this proxy: its lines in flight, the answers not yet sent to the control
 * plane (sent every RESULTS_PAGE answers, so its counts move while it runs), and whether it stops.
 */
class BatchRun {
  stop: Stop = null;
  readonly inFlight = new Set<RunningLine>();
  private pending: LineResult[] = [];
  private sending: Promise<void> = Promise.resolve();
  /** Pages handed to `sending` and not acknowledged yet. */
  private unsent = 0;
  private failure: unknown = null;

  constructor(
    private readonly runner: BatchRunner,
    readonly batch: BatchRow,
    readonly keyHash: string,
  ) {}

  get going(): boolean {
    return this.stop === null && this.failure === null && !this.runner.stopping;
  }

  /** The control plane refused a page of answers: no line starts, and the run fails once the lines in flight end. */
  private fail(err: unknown): void {
    if (this.failure === null) this.failure = err;
  }

  /** Stops the batch: no line starts, and the lines in flight end now (as a client leaving would). */
  halt(why: Exclude<Stop, null>): void {
    if (this.stop !== null) return;
    this.stop = why;
    for (const running of this.inFlight) running.stop();
  }

  async check(): Promise<void> {
    const now = await this.runner.batchStore.run(this.batch.id).catch(() => undefined);
    if (now === undefined) return;
    if (now === null || now.key_hash === null) return this.halt('key');
    if (now.batch.status === 'cancelling' || ended(now.batch.status)) return this.halt(now.batch.reason?.code === 'UNAUTHORIZED' ? 'key' : 'cancelled');
    if (pastWindow(now.batch)) this.halt('expired');
  }

  /**
   * Every line of the feed, BATCH_LINE_CONCURRENCY at a time, then the last answers sent. Answers go
   * to the control plane in pages while the workers go on; a worker waits only when two pages are
   * already on their way, so a slow control plane slows the batch instead of filling memory.
   */
  async lines(feed: LineFeed, handOffs: HandOffs): Promise<void> {
    let failed = await this.runAll(() => feed.next(), handOffs, true);
    // Lines handed off go to their providers unless the batch stopped meanwhile: they are then never sent (the
    // batch's end answers them), and a proxy stopping leaves them to the run that takes the batch over.
    if (failed === undefined && this.going) {
      try {
        // Lines too few for their provider's batch run here, as a gateway-run batch's do.
        const small = await handOffs.flush();
        if (small.length > 0) failed = await this.runAll(async () => small.shift() ?? null, handOffs, false);
      } catch (err) {
        failed = { status: 'rejected', reason: err };
      }
    } else handOffs.discard();
    // Answers already made are sent either way: they are never asked of the provider again.
    await this.flush();
    if (failed !== undefined) throw failed.reason;
  }

  /** Runs the lines `next` gives, BATCH_LINE_CONCURRENCY at a time; the first failure, once every worker has stopped. */
  private async runAll(next: () => Promise<ClaimedLine | null>, handOffs: HandOffs, handOff: boolean): Promise<PromiseRejectedResult | undefined> {
    const worker = async () => {
      while (this.going) {
        const line = await next();
        if (line === null) return;
        // The control plane holds lines the proxy checked at upload.
        const request = JSON.parse(line.content) as { custom_id: string; body: unknown };
        const answered = await this.runner.answer(this, line, Buffer.from(JSON.stringify(request.body)), handOff);
        if (answered === null) continue;
        if (answered.handedOff !== null) {
          await handOffs.add(line, answered.handedOff);
          continue;
        }
        if (answered.errorCode === 'UNAUTHORIZED') {
          this.halt('key');
          continue;
        }
        await this.answered({ line_no: line.line_no, custom_id: request.custom_id, status_code: answered.status, request_id: answered.requestId, body: answered.body });
      }
    };
    // Every worker has stopped before a failure is passed on: none runs lines behind the batch's back.
    const settled = await Promise.allSettled(Array.from({ length: this.runner.concurrency }, worker));
    return settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  }

  /** Queues a line's answer; a worker waits only when two pages are already on their way. */
  async answered(result: LineResult): Promise<void> {
    this.pending.push(result);
    if (this.pending.length >= RESULTS_PAGE) {
      const sent = this.flush();
      if (this.unsent > 1) await sent;
    }
  }

  async stored(): Promise<void> {
    await this.flush();
  }

  /**
   * Sends the answers not sent yet, one call at a time; a cancel seen in the answer stops the
   * batch. A page goes only once its lines' records are in Redis: a proxy killed in between
   * leaves those lines unanswered, to be run again (their records keep their ids, so the writer
   * lands them once), never answered without their records.
   */
  flush(): Promise<void> {
    if (this.pending.length === 0) return this.sending;
    const results = this.pending.sort((a, b) => a.line_no - b.line_no);
    this.pending = [];
    this.unsent++;
    const recorded = this.runner.recordsQueued();
    this.sending = this.sending.then(async () => {
      try {
        await recorded;
        const ack = await this.runner.batchStore.results(this.batch.id, results);
        if (ack.status === 'cancelling' || ended(ack.status)) this.halt('cancelled');
      } finally {
        this.unsent--;
      }
    });
    // A page that could not be sent fails the run: the job is tried again from the unanswered lines.
    this.sending.catch((err: unknown) => this.fail(err));
    return this.sending;
  }
}

/** How long to wait before trying the line again, or null when its answer is final. */
function waitFor(answer: LineAnswer, providerFailures: number): number | null {
  const code = answer.errorCode;
  if (code === 'RATE_LIMITED' || (answer.status === 503 && code !== 'GUARDRAIL_UNAVAILABLE')) return Math.min(MAX_WAIT_MS, (answer.retryAfter ?? 1) * 1_000);
  if (isProviderFailure(answer) && providerFailures < PROVIDER_RETRIES) return 1_000 * 2 ** providerFailures;
  return null;
}

function isProviderFailure(answer: LineAnswer): boolean {
  return answer.errorCode === 'UPSTREAM_ERROR' || answer.errorCode === 'UPSTREAM_TIMEOUT';
}

/** A batch not ended within its completion window (`expires_at`, as OpenAI's and Anthropic's expire at 24 hours). */
function pastWindow(batch: BatchRow): boolean {
  return batch.expires_at * 1000 <= Date.now();
}

function ended(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'expired' || status === 'cancelled';
}

/** Waits for the promise (either way) or the deadline, whichever comes first; the timer holds no process up. */
function waitAtMost(promise: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([promise.catch(() => {}), sleep(ms, undefined, { ref: false })]);
}
