import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { connectRedis, quitRedis, duplicateRedis, loadWriterConfig, RedisKeys, setStartupWait, startMetricsServer, startupWaitFor, StartupError, type Env, type MetricsServer, type RecordBatchVersion, type WriterConfig, type RedisClient } from '@gateway/shared';
import { migrate } from '../db/migrate.js';
import { ensurePartitions } from '../db/partitions.js';
import { createLogger } from '../logger.js';
import { createRegistry } from '../metrics.js';
import { DEFAULT_WEBHOOK_OPTIONS, WebhookWorker, type WebhookWorkerOptions } from '../webhooks/webhook-worker.js';
import { WebhookQueue } from '../webhooks/webhook-queue.js';
import { startTracing, WRITER_SERVICE_NAME } from '../tracing/start-tracing.js';
import { RecordWorker } from './record-worker.js';
import { WriterDb } from './writer-db.js';
import { writerMetrics } from './writer-metrics.js';

/** Knobs that are not configuration an operator sets, but that tests and benches turn. */
export interface WriterOptions {
  log?: Logger;
  /** Interface of the metrics listener. */
  host?: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxBackoffMs?: number;
  /** Batch versions read (default: all this build knows); a test stands in an older writer with fewer. */
  batchVersions?: readonly RecordBatchVersion[];
  /** Webhook delivery knobs (timeouts, retry delays, windows); WEBHOOK_ALLOW_PRIVATE comes from the environment. */
  webhooks?: Partial<Omit<WebhookWorkerOptions, 'allowPrivate'>>;
}

export interface Writer {
  config: WriterConfig;
  log: Logger;
  metrics: Registry;
  /** Port of /metrics, /healthz and /readyz, or null when WRITER_PORT=0. */
  port: number | null;
  recordWorker: RecordWorker;
  webhookWorker: WebhookWorker;
  /** Finishes the batches in hand (up to timeoutMs), then disconnects. */
  close(timeoutMs?: number): Promise<void>;
}

// A batch takes milliseconds; the lock is renewed every half of this while it is written. A
// killed writer's batch is taken over after at most lockDuration + 2 × stalledInterval.
const LOCK_DURATION_MS = 10_000;
const STALLED_INTERVAL_MS = 5_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Brings one writer process (or an in-process writer) up: Postgres connected and migrated (a
 * writer started alone works), Redis, the BullMQ worker, then the metrics listener. Throws
 * StartupError / ConfigError with an operator-readable message.
 */
export async function startWriter(env: Env, options: WriterOptions = {}): Promise<Writer> {
  const config = loadWriterConfig(env);
  const log = options.log ?? createLogger(config.logLevel, 'writer');
  const tracer = await startTracing(env, WRITER_SERVICE_NAME, log);
  // One connection per batch in flight, one for /readyz, two for the webhook worker's short
  // statements (it holds none while an endpoint answers).
  const wait = startupWaitFor(config.startupTimeoutMs, log);
  setStartupWait(wait);
  const db = await WriterDb.open(config.databaseUrl, config.concurrency + 3, wait);
  const opened: { redis?: RedisClient; probe?: RedisClient; hooks?: RedisClient; server?: MetricsServer; queues?: Queue[]; webhookQueue?: WebhookQueue } = {};
  try {
    const migrated = await migrate(db.sql);
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');
    // Once at start, like the migrations, so a writer started alone has this month's partitions;
    // the periodic upkeep belongs to the control plane (see control-plane.ts).
    await ensurePartitions(db.sql);
    // BullMQ's blocking connection (duplicated from this one) needs maxRetriesPerRequest null.
    opened.redis = await connectRedis(config.redis);
    opened.redis.on('error', (err: Error) => log.debug({ err: { message: err.message } }, 'redis connection error'));
    // Scrapes and readiness fail fast while Redis is away instead of queueing behind it.
    opened.probe = duplicateRedis(opened.redis, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    opened.probe.on('error', () => {});

    const keys = new RedisKeys(config.redisPrefix);
    const registry = createRegistry('gateway_writer_');
    opened.queues = Array.from({ length: config.recordQueues }, (_, shard) => {
      const queue = new Queue(keys.recordsQueue, { connection: opened.probe as RedisClient, prefix: keys.recordsQueuePrefix(shard) });
      queue.on('error', () => {});
      return queue;
    });
    const metrics = writerMetrics(registry, opened.queues);
    if (config.port > 0) {
      const probe = opened.probe;
      opened.server = await startMetricsServer(options.host ?? '0.0.0.0', config.port, registry, async () => ({
        postgres: await db.sql`select 1`.then(() => true, () => false),
        redis: probe.status === 'ready' ? await probe.ping().then(() => true, () => false) : false,
      })).catch((err: NodeJS.ErrnoException) => {
        throw new StartupError(`The writer cannot listen on port ${config.port} (${err.code ?? err.message}). Set WRITER_PORT to a free port, or 0 to disable it.`);
      });
    }

    // Hand-overs to the webhooks queue fail fast while Redis is away: the sweep makes them later.
    opened.hooks = duplicateRedis(opened.redis, { maxRetriesPerRequest: 1 });
    opened.hooks.on('error', () => {});
    opened.webhookQueue = new WebhookQueue(opened.hooks, keys);

    // Last, so that nothing after it can fail and leave a worker running behind a failed start.
    const webhookWorker = new WebhookWorker(db, opened.redis, keys, opened.webhookQueue, log, registry, {
      ...DEFAULT_WEBHOOK_OPTIONS,
      ...options.webhooks,
      allowPrivate: config.webhookAllowPrivate,
    });
    const recordWorker = new RecordWorker(db, opened.redis, keys, metrics, log, {
      onWritten: (result) => webhookWorker.afterBatch(result),
      concurrency: config.concurrency,
      lockDurationMs: options.lockDurationMs ?? LOCK_DURATION_MS,
      stalledIntervalMs: options.stalledIntervalMs ?? STALLED_INTERVAL_MS,
      maxBackoffMs: options.maxBackoffMs ?? MAX_BACKOFF_MS,
      ...(options.batchVersions ? { batchVersions: options.batchVersions } : {}),
      tracer,
      recordQueues: config.recordQueues,
    });
    const { redis, probe, hooks, server, queues, webhookQueue } = opened;
    let closing: Promise<void> | null = null;
    return {
      config,
      log,
      metrics: registry,
      port: server?.port ?? null,
      recordWorker,
      webhookWorker,
      close(timeoutMs = 10_000) {
        closing ??= (async () => {
          await Promise.all([recordWorker.close(timeoutMs), webhookWorker.close(timeoutMs)]);
          await tracer?.close();
          await Promise.allSettled([server?.close(), ...queues.map((q) => q.close()), webhookQueue.close()]);
          await Promise.allSettled([quitRedis(redis), quitRedis(probe), quitRedis(hooks), db.end()]);
        })();
        return closing;
      },
    };
  } catch (err) {
    await opened.server?.close();
    await Promise.all((opened.queues ?? []).map((q) => q.close().catch(() => {})));
    await opened.webhookQueue?.close().catch(() => {});
    opened.hooks?.disconnect();
    opened.probe?.disconnect();
    opened.redis?.disconnect();
    await db.end().catch(() => {});
    throw err;
  }
}
