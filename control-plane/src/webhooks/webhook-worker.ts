import { DelayedError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { RedisKeys, RedisClient, Resolver } from '@gateway/shared';
import type { WriterDb } from '../writer/writer-db.js';
import { claimDelivery, markDelivered, markFailed, markRetrying, markSkipped } from './delivery-store.js';
import { reportFailedRequests } from './failed-requests.js';
import { announceCrossing, type QuotaCrossing } from './quota-events.js';
import { DEFAULT_RETRY_DELAYS_MS, retryDelay } from './retry-schedule.js';
import { DELIVER_JOB, FAILED_REQUESTS_JOB, type DeliverJobData, type FailedRequestsJobData, type WebhookQueue } from './webhook-queue.js';
import { ProjectSlots } from './project-slots.js';
import { WebhookSender } from './webhook-sender.js';

/**
 * The writers' side of webhooks: a BullMQ worker on RedisKeys.webhooksQueue that makes one
 * delivery attempt per job (and turns a project's failure window into its event), the hand-over
 * of what a record batch set off (thresholds crossed, failures waiting), and a periodic sweep that
 * queues again whatever Postgres says is due but Redis lost.
 *
 * Delivery is at least once: an attempt whose answer was lost, or whose writer died before
 * recording it, is made again with the same webhook-id, which receivers de-duplicate on.
 */
export interface WebhookWorkerOptions {
  /** Attempts in flight at once per writer. */
  concurrency: number;
  /**
   * Attempts of one project in flight at once per writer: a project whose endpoints hang holds at
   * most this many of the `concurrency` slots, so every other project's deliveries go on.
   */
  projectConcurrency: number;
  /** How long a delivery of a project at its share waits (outside the slots) before it is tried again, ±50 %. */
  projectDeferMs: number;
  /** Longest wait for an endpoint's answer (connect included). */
  timeoutMs: number;
  /** Delays before the 2nd, 3rd, … attempt; one more attempt than delays. */
  retryDelaysMs: readonly number[];
  /** Deliveries in a row that end failed before the webhook is disabled. */
  disableAfter: number;
  /** A project gets at most one gateway.request.failed event per window. */
  failedRequestsWindowMs: number;
  sweepIntervalMs: number;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  resolve?: Resolver;
}

export const DEFAULT_WEBHOOK_OPTIONS: Omit<WebhookWorkerOptions, 'allowPrivate'> = {
  concurrency: 32,
  projectConcurrency: 4,
  projectDeferMs: 1_000,
  timeoutMs: 10_000,
  retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
  disableAfter: 5,
  failedRequestsWindowMs: 10_000,
  sweepIntervalMs: 30_000,
};

/** What one written record batch set off (WriteResult of batch-writer.ts). */
export interface BatchSignals {
  quotaCrossings: readonly QuotaCrossing[];
  failedRequestProjects: readonly string[];
}

// An attempt is given up for lost (and made again by the sweep) this long after its timeout.
const LEASE_MARGIN_MS = 30_000;
// A pending delivery a minute past due has lost its job; events are kept 30 days.
const SWEEP_BATCH = 500;

export class WebhookWorker {
  readonly worker: Worker;
  private readonly sender: WebhookSender;
  private readonly attempts: Counter<'result'>;
  private readonly disabled: Counter;
  private readonly deferred: Counter;
  private readonly slots: ProjectSlots;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly db: WriterDb,
    connection: RedisClient,
    keys: RedisKeys,
    private readonly queue: WebhookQueue,
    private readonly log: Logger,
    registry: Registry,
    private readonly options: WebhookWorkerOptions,
  ) {
    this.sender = new WebhookSender({ timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) });
    this.attempts = new Counter({
      name: 'gateway_writer_webhook_attempts_total',
      help: 'Webhook delivery attempts by result: delivered, retrying (failed, tried again later) or failed (the last attempt)',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.disabled = new Counter({ name: 'gateway_writer_webhooks_disabled_total', help: 'Webhooks disabled after failed deliveries', registers: [registry] });
    this.deferred = new Counter({
      name: 'gateway_writer_webhook_deferrals_total',
      help: 'Delivery attempts put back to wait because their project had its share of attempts in flight',
      registers: [registry],
    });
    this.slots = new ProjectSlots(options.projectConcurrency);
    this.worker = new Worker(keys.webhooksQueue, (job, token) => this.process(job, token), {
      connection,
      prefix: keys.bullPrefix,
      concurrency: options.concurrency,
      lockDuration: options.timeoutMs + LEASE_MARGIN_MS,
      // A job of a writer that died is simply run again: the claim makes that safe.
      maxStalledCount: 2 ** 31 - 1,
    });
    // Through an outage every job fails the same way; one line per 10 s says it.
    const lastWarning = { queue: 0, job: 0 };
    const quiet = (kind: keyof typeof lastWarning) => {
      const now = Date.now();
      if (now - lastWarning[kind] < 10_000) return true;
      lastWarning[kind] = now;
      return false;
    };
    this.worker.on('error', (err) => {
      if (!quiet('queue')) log.warn({ err: { message: err.message } }, 'webhooks queue error (Redis unavailable?); the worker keeps retrying');
    });
    this.worker.on('failed', (job, err) => {
      if (!quiet('job')) log.warn({ job: job?.id, err: { message: err.message } }, 'webhook job failed (PostgreSQL unavailable?); the sweep will queue it again');
    });
    this.sweepTimer = setInterval(() => void this.sweep().catch(() => {}), options.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private async process(job: Job, token: string | undefined): Promise<void> {
    if (job.name === DELIVER_JOB) return this.fairAttempt(job, token);
    if (job.name === FAILED_REQUESTS_JOB) {
      for (const event of await reportFailedRequests(this.db.sql, (job.data as FailedRequestsJobData).project_id)) await this.queue.deliver(event.projectId, event.deliveryIds);
    }
  }

  /**
   * One attempt, unless its project already has its share in flight here. Then the job goes back
   * to the delayed set instead of taking a slot: an endpoint that hangs until the timeout holds
   * only its project's share, and the jobs of other projects behind it in the queue are taken at
   * once. (BullMQ's open-source queue has no groups; this is its documented manual delay.)
   */
  private async fairAttempt(job: Job, token: string | undefined): Promise<void> {
    const { delivery_id: deliveryId, project_id: projectId } = job.data as DeliverJobData;
    // A job queued by an older version names no project: it is run as before.
    if (projectId === undefined) return this.attempt(deliveryId);
    if (!this.slots.take(projectId)) {
      this.deferred.inc();
      await job.moveToDelayed(Date.now() + Math.round(this.options.projectDeferMs * (0.5 + Math.random())), token);
      throw new DelayedError();
    }
    try {
      await this.attempt(deliveryId);
    } finally {
      this.slots.release(projectId);
    }
  }

  /** One attempt of one delivery, if it is still due. */
  private async attempt(deliveryId: string): Promise<void> {
    const claim = await claimDelivery(this.db.sql, deliveryId, this.options.timeoutMs + LEASE_MARGIN_MS);
    if (claim === null) return;
    if (!claim.live) {
      await markSkipped(this.db.sql, claim, 'the webhook was disabled');
      return;
    }
    const result = await this.sender.send({ url: claim.url, secret: claim.secret }, { id: claim.eventId, body: claim.body });
    const facts = { webhook_id: claim.webhookId, delivery_id: claim.id, event_id: claim.eventId, attempt: claim.attempt, status: result.status };
    if (result.ok) {
      await markDelivered(this.db.sql, claim, result.status as number);
      this.attempts.inc({ result: 'delivered' });
      return;
    }
    const error = result.error ?? 'the request failed';
    const delay = result.gone ? null : retryDelay(this.options.retryDelaysMs, claim.attempt);
    if (delay !== null) {
      this.attempts.inc({ result: 'retrying' });
      this.log.info({ ...facts, error, retry_in_ms: delay }, 'webhook delivery attempt failed; retrying');
      if (await markRetrying(this.db.sql, claim, { status: result.status, error }, delay)) {
        await this.queue.deliver(claim.projectId, [claim.id], claim.attempt + 1, delay).catch((err: Error) =>
          this.log.warn({ ...facts, err: { message: err.message } }, 'webhook retry not queued; the sweep will queue it'),
        );
      }
      return;
    }
    this.attempts.inc({ result: 'failed' });
    this.log.warn({ ...facts, error }, 'webhook delivery failed after its last attempt');
    const outcome = await markFailed(this.db.sql, claim, { status: result.status, error, gone: result.gone }, this.options.disableAfter);
    if (outcome.disabled) {
      this.disabled.inc();
      this.log.warn({ webhook_id: claim.webhookId, project_id: claim.projectId }, 'webhook disabled');
    }
  }

  /**
   * After a record batch committed: announce the thresholds it crossed and make sure each
   * project with new failures has its window's job. Never throws: what is not handed over here
   * is found by the sweep.
   */
  async afterBatch(signals: BatchSignals): Promise<void> {
    try {
      for (const crossing of signals.quotaCrossings) {
        const event = await announceCrossing(this.db.sql, crossing);
        if (event !== null) await this.queue.deliver(event.projectId, event.deliveryIds);
      }
      for (const projectId of signals.failedRequestProjects) await this.queue.failedRequests(projectId, this.options.failedRequestsWindowMs);
    } catch (err) {
      this.log.warn({ err: { message: (err as Error).message } }, 'webhook events of a record batch not handed over; the sweep will');
    }
  }

  /** Queues again what Postgres holds as due and Redis may have lost; drops events past retention. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((err: Error) => this.log.warn({ err: { message: err.message } }, 'webhook sweep failed'))
      .finally(() => {
        this.sweeping = null;
      });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const sql = this.db.sql;
    const due = await sql<{ id: string; attempts: number; project_id: string }[]>`
      select d.id, d.attempts, w.project_id from webhook_deliveries d join webhooks w on w.id = d.webhook_id
      where d.status = 'pending' and d.next_attempt_at < now() - interval '1 minute'
      order by d.next_attempt_at limit ${SWEEP_BATCH}`;
    for (const row of due) await this.queue.deliver(row.project_id, [row.id], row.attempts + 1);

    const crossings = await sql<QuotaCrossing[]>`
      select project_id, period, threshold, quota_tokens::text as quota_tokens from quota_thresholds
      where event_id is null and crossed_at < now() - interval '30 seconds'
      order by crossed_at limit ${SWEEP_BATCH}`;
    await this.afterBatch({ quotaCrossings: crossings, failedRequestProjects: [] });

    const waiting = await sql<{ project_id: string }[]>`
      select distinct project_id from webhook_failed_requests
      where landed_at < now() - ${2 * this.options.failedRequestsWindowMs}::int * interval '1 millisecond'
      limit ${SWEEP_BATCH}`;
    await this.afterBatch({ quotaCrossings: [], failedRequestProjects: waiting.map((r) => r.project_id) });

    await sql`
      delete from webhook_events where id in (
        select e.id from webhook_events e
        where e.created_at < now() - interval '30 days'
          and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
        limit ${SWEEP_BATCH})`;
  }

  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.sweepTimer);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.worker.close().then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    // An attempt cut short is made again after its lease, by another writer or the sweep.
    if (timedOut) await this.worker.close(true).catch(() => {});
    await this.sweeping;
    await this.sender.close();
  }
}
