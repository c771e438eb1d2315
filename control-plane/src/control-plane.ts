import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { ConfigError, loadControlPlaneConfig, loadServedModels, RedisKeys, setStartupWait, startMetricsServer, startupWaitFor, StartupError, connectRedis, duplicateRedis, isCluster, quitRedis, type Env, type MetricsServer } from '@gateway/shared';
import { jwtServiceFromConfig } from './auth/jwt.js';
import { jwtSecretOf } from './auth/jwt-secret-file.js';
import { OidcSignin } from './auth/oidc.js';
import { SigninThrottle } from './auth/signin-throttle.js';
import type { AppContext } from './context.js';
import { connectDb } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { ensurePartitions } from './db/partitions.js';
import { buildApp } from './http/app.js';
import { CursorCodec } from './http/cursor.js';
import { InvalidationFeed, pruneInvalidations } from './keys/invalidation-log.js';
import { ProjectionRebuilder } from './keys/projection-rebuild.js';
import { KeyProjection } from './keys/projection.js';
import { createLogger } from './logger.js';
import { createRegistry } from './metrics.js';
import { QuotaReconciler } from './quota/reconciler.js';
import { BudgetKeeper } from './budgets/budget-keeper.js';
import { StoredResponsePurger } from './responses/stored-response-purger.js';
import { BatchPurger } from './batches/batch-purger.js';
import { seed, seedOptionsFrom, type SeedResult } from './seed.js';
import { WebhookEmitter } from './webhooks/webhook-emitter.js';
import { WebhookQueue } from './webhooks/webhook-queue.js';
import { CONTROL_PLANE_SERVICE_NAME, startTracing } from './tracing/start-tracing.js';

export interface ControlPlane {
  app: FastifyInstance;
  reconciler: QuotaReconciler;
  /** Deletes expired stored responses every minute. */
  storedResponsePurger: StoredResponsePurger;
  /** Deletes the batches and files of projects deleted 30 days ago, every hour. */
  batchPurger: BatchPurger;
  ctx: AppContext;
  port: number;
  /** Port of /metrics (with /healthz and /readyz): CONTROL_METRICS_PORT. */
  metricsPort: number;
  seeded: SeedResult;
  /** Opens a fresh Postgres pool (once Postgres answers) and retires the current one. */
  replacePool(): Promise<void>;
  close(): Promise<void>;
}

const PARTITION_CHECK_MS = 6 * 60 * 60 * 1000;

export interface StartOptions {
  /** Where log lines go instead of stdout (tests read them to prove no secret is logged). */
  logDestination?: DestinationStream;
}

/**
 * Brings the control plane up in dependency order: Postgres (created and migrated), Redis, the
 * key projection rebuilt from Postgres (Redis may have restarted empty), first-start seeding, then
 * the HTTP listener. Throws StartupError / ConfigError with an operator-readable message.
 */
export async function startControlPlane(env: Env, options: StartOptions = {}): Promise<ControlPlane> {
  const config = loadControlPlaneConfig(env);
  const log = createLogger(config.logLevel, 'control-plane', options.logDestination);
  // Before any connection: a bad secret is a configuration error with nothing to clean up.
  const jwt = jwtServiceFromConfig(config, await jwtSecretOf(config, log));
  const seedOptions = seedOptionsFrom(config);
  const servedModels = loadServedModels(env);
  const tracer = await startTracing(env, CONTROL_PLANE_SERVICE_NAME, log);
  // Redis and PostgreSQL may still be starting (a host boots, an orchestrator starts all at once).
  const wait = startupWaitFor(config.startupTimeoutMs, log);
  setStartupWait(wait);
  const sql = await connectDb(config.databaseUrl, { createIfMissing: true, wait });
  let redis;
  try {
    const migrated = await migrate(sql);
    // Said plainly: a first start creates the schema, an upgrade names what it changed.
    if (migrated.applied.length > 0 && migrated.alreadyApplied === 0) log.info({ migrations: migrated.applied.length }, 'database schema created');
    else if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'database schema updated');
    await ensurePartitions(sql);
    redis = await connectRedis(config.redis);
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  redis.on('error', (err) => log.warn({ err: { message: err.message } }, 'redis connection error'));

  const keys = new RedisKeys(config.redisPrefix);
  const projection = new KeyProjection(redis, keys);
  // Queuing a webhook delivery gives up fast while Redis is away; the writers' sweep queues it later.
  const hooksRedis = duplicateRedis(redis, { maxRetriesPerRequest: 1 });
  hooksRedis.on('error', () => {});
  const invalidations = new InvalidationFeed(() => ctx.sql);
  const ctx: AppContext = {
    config,
    sql,
    redis,
    keys,
    projection,
    invalidations,
    jwt,
    cursors: new CursorCodec(jwt.secrets),
    signinThrottle: new SigninThrottle(redis, keys),
    log,
    metrics: createRegistry('control_plane_'),
    webhooks: new WebhookEmitter(() => ctx.sql, new WebhookQueue(hooksRedis, keys), log),
    tracer,
    servedModels,
    oidc: config.oidc === null ? null : new OidcSignin(config.oidc, log),
  };

  const reconciler = new QuotaReconciler(ctx, config.quotaReconcileMs);
  const budgetKeeper = new BudgetKeeper(ctx);
  const storedResponsePurger = new StoredResponsePurger(ctx);
  const batchPurger = new BatchPurger(ctx);
  let replacing: Promise<void> | null = null;
  try {
    await invalidations.start();
  } catch (err) {
    await Promise.allSettled([sql.end({ timeout: 1 }), quitRedis(redis), quitRedis(hooksRedis)]);
    throw err;
  }
  const rebuilder = new ProjectionRebuilder(redis, keys, log);
  const rebuilt = await rebuilder.run(ctx.sql);
  if (rebuilt === null) log.info('API keys already copied into Redis by another control plane');
  // Quota ledgers Redis lost are started again from Postgres before any proxy can lease from them.
  await reconciler.run();
  await budgetKeeper.run();
  // Redis keeps nothing on disk: after a reconnect it may be a new, empty server, or one that
  // missed deletions made while it was away. Either way the projection is made again from the
  // source of truth (by one control plane; the others wait for it), and proxies are told only what
  // changed. A failed rebuild is tried again: until one completes, proxies answer 503 to keys
  // they do not hold rather than "no such key".
  let redisLost = false;
  redis.on('close', () => {
    redisLost = true;
  });
  const rebuildAfterReconnect = (attempt: number): void => {
    rebuilder
      .run(ctx.sql)
      .then(() => reconciler.run())
      .catch((err: Error) => {
        log.error({ err: { message: err.message } }, 'key projection rebuild failed; retrying');
        if (!redisLost) setTimeout(() => rebuildAfterReconnect(attempt + 1), Math.min(5_000, 250 * 2 ** Math.min(attempt, 5))).unref();
      });
  };
  redis.on('ready', () => {
    if (!redisLost) return;
    redisLost = false;
    rebuildAfterReconnect(0);
  });
  // On a Redis Cluster a failover loses a node, not this client's connection, and the replica
  // that took over may have missed the last writes (a deletion, a sign-out): the projection is
  // made again and the sign-outs copied again, as after a reconnect. The rebuild's commands wait
  // for the replica's promotion (the cluster client retries them).
  if (isCluster(redis)) {
    const cluster = redis;
    cluster.on('-node', () => {
      // Nodes also leave when this client quits.
      if (cluster.status !== 'ready') return;
      cluster
        .del(keys.signoutsLoaded)
        .then(() => rebuildAfterReconnect(0))
        .catch((err: Error) => log.error({ err: { message: err.message } }, 'sign-outs reload after a node loss failed'));
    });
  }
  const seeded = await seed(sql, projection, seedOptions);

  const app = await buildApp(ctx);
  await app.listen({ host: config.host, port: config.port, listenTextResolver: (address) => `management API and dashboard at ${address}` });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  let ops: MetricsServer;
  try {
    ops = await startMetricsServer(config.host, config.metricsPort, ctx.metrics, async () => ({
      postgres: await ctx.sql`select 1`.then(() => true, () => false),
      redis: ctx.redis.status === 'ready' ? await ctx.redis.ping().then(() => true, () => false) : false,
    }));
  } catch (err) {
    invalidations.closeStreams();
    await app.close();
    await invalidations.close().catch(() => {});
    await tracer?.close();
    await Promise.allSettled([sql.end({ timeout: 1 }), quitRedis(redis), quitRedis(hooksRedis)]);
    throw new StartupError(
      `the control plane could not open its metrics port ${config.metricsPort} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set CONTROL_METRICS_PORT to a free port`,
    );
  }

  // The one owner of partition upkeep. The control plane owns the schema (it migrates) and runs
  // as one or a few replicas for the life of a deployment, while writers are scaled out (each
  // would repeat the same DDL checks) and may be stopped while the queue waits. Writers still
  // ensure partitions once at start, as they migrate. Partitions are made two months ahead, so a
  // control plane down for weeks still leaves records their partition.
  const partitionTimer = setInterval(() => {
    ensurePartitions(ctx.sql).catch((err: Error) => log.error({ err: { message: err.message } }, 'partition maintenance failed'));
    pruneInvalidations(ctx.sql).catch((err: Error) => log.error({ err: { message: err.message } }, 'invalidation log pruning failed'));
  }, PARTITION_CHECK_MS);
  partitionTimer.unref();
  reconciler.start();
  budgetKeeper.start();
  storedResponsePurger.start();
  batchPurger.start();

  return {
    app,
    reconciler,
    storedResponsePurger,
    batchPurger,
    ctx,
    port,
    metricsPort: ops.port,
    seeded,
    replacePool() {
      replacing ??= replacePool(ctx).finally(() => {
        replacing = null;
      });
      return replacing;
    },
    async close() {
      clearInterval(partitionTimer);
      invalidations.closeStreams();
      await app.close();
      await ops.close();
      await invalidations.close();
      await tracer?.close();
      await reconciler.close();
      budgetKeeper.close();
      await storedResponsePurger.close();
      await batchPurger.close();
      await ctx.webhooks.close().catch(() => {});
      await Promise.allSettled([ctx.sql.end({ timeout: 5 }), quitRedis(redis), quitRedis(hooksRedis)]);
    },
  };
}

/** Swaps in a fresh pool once PostgreSQL answers again; requests in flight finish on the old one. */
async function replacePool(ctx: AppContext): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fresh = await connectDb(ctx.config.databaseUrl);
      const old = ctx.sql;
      ctx.sql = fresh;
      // Until this succeeds the invalidation streams rely on their one-second poll.
      void ctx.invalidations.listen().catch((err: Error) => ctx.log.warn({ err: { message: err.message } }, 'invalidation log LISTEN failed'));
      void old.end({ timeout: 5 }).catch(() => {});
      ctx.log.info('database connection pool replaced');
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** Math.min(attempt, 5))));
    }
  }
}

export { ConfigError, StartupError };
