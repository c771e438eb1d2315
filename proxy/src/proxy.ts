import { randomInt, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { Errors, connectRedis, connectSubscriber, quitRedis, loadProvidersConfig, loadProxyConfig, logRedaction, RedisKeys, setStartupWait, startMetricsServer, startupWaitFor, type Env, type MetricsServer, type ProxyConfig, type RedisClient } from '@gateway/shared';
import { InFlightRegistry } from './auth/in-flight.js';
import { InvalidationStream } from './auth/invalidation-stream.js';
import { InvalidationSubscriber } from './auth/invalidation-subscriber.js';
import { KeyCache } from './auth/key-cache.js';
import type { GatewayDeps } from './pipeline/context.js';
import { RE2_ENGINE } from '@gateway/shared/guardrails';
import { GuardrailRuntime } from './guardrails/runtime.js';
import { startProxyServer, type ProxyServer } from './http/server.js';
import { McpUpstreams } from './mcp/mcp-upstreams.js';
import { SessionSigner } from './mcp/session-signer.js';
import { loadUws, uwsBinding } from './http/uws.js';
import { createProxyMetrics, registerCooldowns, registerQueueDepth } from './metrics.js';
import { ProjectPolicies } from './policy/project-policies.js';
import { QuotaLeases } from './policy/quota-leases.js';
import { BudgetLeases } from './policy/budget-leases.js';
import { RateLimiter } from './policy/rate-limiter.js';
import { PROVIDER_TYPES } from './providers/registry.js';
import { StepTimes } from './pipeline/step-clock.js';
import { RecordBuffer } from './records/record-buffer.js';
import type { RecordSink } from './records/record-sink.js';
import { ModelRouter } from './routing/model-router.js';
import { startTracing } from './tracing/start-tracing.js';
import { metricsPortError } from './startup-errors.js';
import { AuthThrottle } from './auth/auth-throttle.js';
import { ProviderLog } from './routing/provider-log.js';
import { ResponseCache } from './cache/response-cache.js';
import { ResponseStore } from './responses/response-store.js';
import { BatchStore } from './batches/batch-store.js';
import { BatchQueue, BatchRunner } from './batches/batch-runner.js';

export interface Proxy {
  port: number;
  /** Port of the operations listener (/metrics, /healthz, /readyz). */
  metricsPort: number;
  config: ProxyConfig;
  deps: GatewayDeps;
  log: Logger;
  /** Subscribed to invalidations and able to look keys up. */
  ready(): boolean;
  /** Stop accepting, let requests finish (cut the rest at the deadline), flush records, disconnect. */
  drain(): Promise<void>;
}

export interface ProxyOptions {
  /** Index of the worker thread this proxy runs on (workers/worker-pool.ts): its metrics carry it, and the pool serves them. */
  worker?: number;
}

/**
 * Wiring of one proxy process, in the order the guarantees need: the native HTTP binding and the
 * providers file are checked before anything connects; the invalidation channel is subscribed
 * before the first key can be looked up; only then does the port open.
 */
export async function startProxy(env: Env, options: ProxyOptions = {}): Promise<Proxy> {
  const config = loadProxyConfig(env);
  const providers = loadProvidersConfig(env, PROVIDER_TYPES);
  loadUws();
  const log = pino({ level: config.logLevel, name: 'proxy', redact: logRedaction() });
  const keys = new RedisKeys(config.redisPrefix);
  // Before anything connects: a tracing setting it cannot honour stops the start.
  const tracer = await startTracing(env, providers, log);

  // Each worker waits for Redis itself; its lines say which worker.
  setStartupWait(startupWaitFor(config.startupTimeoutMs, options.worker === undefined ? log : log.child({ worker: options.worker })));
  const opened: RedisClient[] = [];
  let stream: InvalidationStream | null = null;
  let closeSubscriber: (() => Promise<void>) | null = null;
  // The subscriber first: a start that failed is not a lost connection to warn about.
  const closeAll = async () => {
    await closeSubscriber?.();
    return Promise.allSettled([...opened.map((r) => quitRedis(r)), stream?.close()]);
  };
  try {
    // Lookups fail fast while Redis is away (503) instead of queueing behind a dead connection.
    const lookups = await connectRedis(config.redis, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    opened.push(lookups);
    const sub = await connectSubscriber(config.redis);
    opened.push(sub);
    const queue = await connectRedis(config.redis, { maxRetriesPerRequest: null });
    opened.push(queue);
    for (const r of opened) r.on('error', (err: Error) => log.debug({ err: { message: err.message } }, 'redis connection error'));

    const metrics = createProxyMetrics();
    if (options.worker !== undefined) metrics.registry.setDefaultLabels({ worker: String(options.worker) });
    const cache = new KeyCache(lookups, keys);
    const inFlight = new InFlightRegistry();
    const policies = new ProjectPolicies(lookups, keys);
    const quotas = new QuotaLeases(lookups, keys, randomUUID(), {
      blockTokens: config.quotaLeaseTokens,
      idleMs: 1_000,
      flushMs: 50,
      aliveTtlMs: 15_000,
      outageFraction: config.outageAllowancePercent / 100,
    });
    const budgets = new BudgetLeases(lookups, keys, randomUUID(), {
      blockNanos: config.budgetLeaseCents * 10_000_000,
      idleMs: 1_000,
      flushMs: 100,
      leaseTtlMs: 30_000,
      outageFraction: config.outageAllowancePercent / 100,
    });
    const rateLimiter = new RateLimiter(lookups, keys);
    const responseCache = new ResponseCache(lookups, keys, config.cacheMaxEntryBytes, metrics.registry, log, config.cacheLocalBytes);
    const subscriber = new InvalidationSubscriber(sub, keys, cache, inFlight, log, {
      projectChanged: (projectId) => {
        policies.forget(projectId);
        quotas.release(projectId);
        budgets.release(projectId);
        rateLimiter.forgetProject(projectId);
        // A purge (or any change) of the project: this proxy's copies of its cached answers go.
        responseCache.forgetProject(projectId);
      },
      allStale: () => policies.refreshAll(),
    });
    closeSubscriber = () => subscriber.close();
    // The second invalidation channel, independent of Redis (docs/architecture.md).
    if (config.controlPlaneUrl !== undefined && config.internalToken !== undefined) {
      stream = new InvalidationStream(config.controlPlaneUrl, config.internalToken, {
        apply: (msg) => subscriber.applyMessage(msg),
        reset: (reason) => subscriber.resetKeys(reason),
      }, log);
      subscriber.attachStream(stream);
      await stream.start();
    }
    await subscriber.start();
    const router = new ModelRouter(providers, new ProviderLog(options.worker === undefined ? log : log.child({ worker: options.worker })));
    registerQueueDepth(metrics.registry, router.adapters);
    // Read on scrape from the count the drain already keeps: no gauge update per request.
    const state = { draining: false, active: 0 };
    metrics.inFlight.setCollector(() => state.active);
    registerCooldowns(metrics.registry, router.health);
    quotas.start();
    budgets.start();
    rateLimiter.start();
    // One of the record queues for this worker's whole life (its confirmations ask that queue's node).
    const records: RecordSink = new RecordBuffer({ connection: queue, keys, queuePrefix: keys.recordsQueuePrefix(randomInt(config.recordQueues)), config, registry: metrics.registry, log });

    const deps: GatewayDeps = {
      config,
      cache,
      subscriber,
      inFlight,
      router,
      records,
      metrics,
      log,
      policies,
      quotas,
      budgets,
      rateLimiter,
      defaultReservation: config.defaultReservationTokens,
      keyStaleBoundMs: config.keyStaleBoundMs,
      state,
      tracer,
      guardrails: new GuardrailRuntime(providers.providers, metrics.registry, { allowPrivate: config.guardrailWebhookAllowPrivate }),
      authThrottle: config.authFailureLimit > 0 ? new AuthThrottle(config.authFailureLimit, records) : null,
      responseCache,
      // Responses API state lives with the control plane (PostgreSQL): kept only when it can be reached.
      responses: config.controlPlaneUrl !== undefined && config.internalToken !== undefined ? new ResponseStore(config.controlPlaneUrl, config.internalToken) : null,
      // So do files and batches.
      batches:
        config.controlPlaneUrl !== undefined && config.internalToken !== undefined
          ? { store: new BatchStore(config.controlPlaneUrl, config.internalToken), queue: new BatchQueue(queue, keys) }
          : null,
      stepTimes: config.stepTimesFile === undefined ? null : new StepTimes(config.stepTimesFile),
    };
    // Ready while cached keys may be served: through a Redis outage the log stream keeps a proxy
    // serving the keys it holds, and taking it out of its load balancer would refuse them all.
    const ready = () => subscriber.trusted(Date.now(), config.keyStaleBoundMs);
    const mcp = new McpUpstreams(providers.mcp_servers, await SessionSigner.load(lookups, keys));
    const server: ProxyServer = await startProxyServer(deps, { ready }, config.host, config.port, mcp);
    // Batches the gateway runs itself, through the same chains as the routes' (batches/batch-runner.ts).
    const { endpoints } = server;
    const batchRunner =
      deps.batches === null || deps.batches === undefined
        ? null
        : new BatchRunner(
            deps,
            deps.batches.store,
            endpoints.lines,
            queue,
            keys,
            log,
          );
    let ops: MetricsServer | null = null;
    if (options.worker === undefined) {
      try {
        ops = await startMetricsServer(config.host, config.metricsPort, metrics.registry, async () => ({ redis: ready(), serving: !deps.state.draining }));
      } catch (err) {
        server.stopListening();
        throw metricsPortError(config.metricsPort, err as Error);
      }
    }
    const binding = uwsBinding();
    log.info(
      { port: server.port, metricsPort: ops?.port ?? null, worker: options.worker, providers: providers.providers.map((p) => p.name), source: providers.source, re2: RE2_ENGINE, uws: `${binding.pkg}@${binding.version} (${binding.binary})`, node: process.version },
      'proxy listening',
    );

    return {
      port: server.port,
      metricsPort: ops?.port ?? 0,
      config,
      deps,
      log,
      ready: () => ready() && !deps.state.draining,
      async drain() {
        if (deps.state.draining) return;
        deps.state.draining = true;
        server.stopListening();
        // Lines in flight end first (their records go with the rest); the batch's job is taken over by another proxy.
        const runnerClosed = batchRunner?.close(config.drainTimeoutMs + 2_000);
        const deadline = Date.now() + config.drainTimeoutMs;
        while (deps.state.active > 0 && Date.now() < deadline) await sleep(25);
        const shuttingDown = Errors.shuttingDown();
        for (const call of inFlight.all()) call.revoke(shuttingDown);
        deps.stepTimes?.write();
        deps.authThrottle?.close();
        await quotas.close();
        await budgets.close();
        await rateLimiter.close();
        await records.close(5_000);
        await tracer?.close();
        await subscriber.close();
        await router.close();
        await mcp.close();
        await deps.guardrails?.close();
        await deps.responses?.close();
        await runnerClosed;
        await deps.batches?.queue.close(2_000);
        await deps.batches?.store.close();
        await ops?.close();
        await closeAll();
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
