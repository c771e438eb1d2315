import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { describeRedisTarget, type RedisAddress, type RedisTarget } from './redis-target.js';
import { currentStartupWait, PermanentStartupFailure, reasonOf, waitForDependency } from './startup-wait.js';

/**
 * A connection to the gateway's Redis, whichever form it takes: one server or a Sentinel-found
 * master (both a `Redis`), or a Redis Cluster. Code that holds a connection takes this type and
 * uses only what both offer.
 */
export type RedisClient = Redis | Cluster;

/** What a connection is for: commands, or a subscriber (which can do nothing else). */
export type RedisRole = 'commands' | 'subscriber';

/**
 * Opens a Redis connection and proves it answers before the caller goes on. A Redis that is not
 * there yet is waited for (the process's start-up wait, logged per step); one still away at its
 * end stops the start with a message naming where it looked. After that first answer the
 * connection reconnects forever with a capped backoff.
 */
export async function connectRedis(target: string, options?: RedisOptions): Promise<Redis>;
export async function connectRedis(target: RedisTarget | string, options?: RedisOptions, role?: RedisRole): Promise<RedisClient>;
export async function connectRedis(target: RedisTarget | string, options: RedisOptions = {}, role: RedisRole = 'commands'): Promise<RedisClient> {
  const url = describeRedisTarget(target);
  const settings: RedisOptions = {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    ...options,
  };
  const client = role === 'subscriber' ? createSubscriberClient(target, settings) : createRedisClient(target, settings);
  // Until Redis first answers, errors are reasons for the start-up wait (the socket's own error,
  // ECONNREFUSED and the like, says more than ioredis's "Connection is closed"); afterwards the
  // owner watches 'error' events itself, and an unwatched one must not crash the process.
  let lastError: unknown;
  client.on('error', (err) => {
    lastError = err;
  });
  try {
    await waitForDependency(
      'redis',
      url,
      () => {
        lastError = undefined;
        return answered(client, () => lastError);
      },
      currentStartupWait(),
    );
  } catch (err) {
    client.disconnect();
    throw err;
  }
  return client;
}

/**
 * The connection the invalidation channel is heard on: always a plain `Redis` (see
 * createSubscriberClient). On a cluster it starts at the first seed node that answers, so a
 * process starts while some node is down.
 */
export async function connectSubscriber(target: RedisTarget | string, options: RedisOptions = {}): Promise<Redis> {
  if (typeof target === 'string' || target.kind !== 'cluster') return (await connectRedis(target, options, 'subscriber')) as Redis;
  let failure: unknown;
  for (let i = 0; i < target.nodes.length; i++) {
    const nodes = [...target.nodes.slice(i), ...target.nodes.slice(0, i)];
    try {
      return (await connectRedis({ ...target, nodes }, options, 'subscriber')) as Redis;
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}

/** A client for `target`, not yet connected unless `options.lazyConnect` is false. */
export function createRedisClient(target: RedisTarget | string, options: RedisOptions = {}): RedisClient {
  if (typeof target === 'string') return new Redis(target, options);
  switch (target.kind) {
    case 'standalone':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis({
        ...options,
        sentinels: target.sentinels,
        name: target.name,
        username: target.username,
        password: target.password,
        db: target.db,
        sentinelPassword: target.sentinelPassword,
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
        // No failoverDetector: its disconnect on +switch-master can land inside a reconnect and
        // leave the client closed for good (seen under test). A failover is followed when the
        // old master's connection drops, as the client then asks the sentinels again.
        // A master demoted without dropping its clients answers writes with READONLY: ask the
        // sentinels again and resend the command.
        reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
      });
    case 'cluster':
      return new Cluster(target.nodes, clusterOptions(target, options));
  }
}

/**
 * On a cluster, PUBLISH reaches every node (replicas too), so a subscriber needs one connection to
 * any node, not a Cluster client: a plain `Redis` that, each time it reconnects, tries the next
 * seed node. It then reports a lost node exactly as a lost standalone server ('close',
 * 'reconnecting', 'ready'), so the owner knows messages may have been missed meanwhile.
 */
export function createSubscriberClient(target: RedisTarget | string, options: RedisOptions = {}): Redis {
  if (typeof target === 'string' || target.kind !== 'cluster') return createRedisClient(target, options) as Redis;
  const nodes = target.nodes;
  let next = 0;
  const client: Redis = new Redis({
    ...options,
    ...nodes[0],
    username: target.username,
    password: target.password,
    ...(target.tls ? { tls: {} } : {}),
    retryStrategy: (times) => {
      next = (next + 1) % nodes.length;
      const node = nodes[next] as RedisAddress;
      // The connector reads host and port from these options at every connect.
      Object.assign(client.options, { host: node.host, port: node.port });
      const delay = options.retryStrategy?.(times);
      return delay === undefined ? Math.min(50 * times, 2_000) : delay;
    },
  });
  return client;
}

/**
 * Another connection like `client` with some options changed (`Redis#duplicate` and
 * `Cluster#duplicate` take them differently).
 */
export function duplicateRedis(client: RedisClient, overrides: RedisOptions = {}): RedisClient {
  if (client instanceof Cluster) {
    // Cluster#duplicate merges options shallowly: the nodes' options are merged here.
    return client.duplicate([], { ...clusterLevel(overrides), redisOptions: { ...client.options.redisOptions, ...nodeLevel(overrides) } });
  }
  return client.duplicate(overrides);
}

/** True when `client` talks to a Redis Cluster (some callers must then ask each master). */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

function clusterOptions(target: Extract<RedisTarget, { kind: 'cluster' }>, options: RedisOptions): ClusterOptions {
  return {
    ...clusterLevel(options),
    // Commands caught by a failover are retried on the new master once the slots move; the
    // budget (maxRedirections × retryDelayOnFailover) covers a replica's promotion.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    maxRedirections: 50,
    redisOptions: {
      ...nodeLevel(options),
      username: target.username,
      password: target.password,
      ...(target.tls ? { tls: {} } : {}),
    },
  };
}

/** The options a Cluster takes itself; the rest go to each node's connection. */
function clusterLevel(options: RedisOptions): ClusterOptions {
  const picked: ClusterOptions = {};
  if (options.lazyConnect !== undefined) picked.lazyConnect = options.lazyConnect;
  if (options.enableOfflineQueue !== undefined) picked.enableOfflineQueue = options.enableOfflineQueue;
  if (options.enableReadyCheck !== undefined) picked.enableReadyCheck = options.enableReadyCheck;
  if (options.retryStrategy !== undefined) {
    const strategy = options.retryStrategy;
    picked.clusterRetryStrategy = (times) => strategy?.(times) ?? null;
  }
  return picked;
}

function nodeLevel(options: RedisOptions): RedisOptions {
  const { lazyConnect: _l, enableOfflineQueue: _o, enableReadyCheck: _r, retryStrategy: _s, ...rest } = options;
  return rest;
}

/**
 * One attempt of the start-up wait. The first connects; while ioredis reconnects on its own (its
 * retryStrategy) later ones wait for the outcome of its next try rather than start another.
 */
async function answered(client: RedisClient, lastError: () => unknown): Promise<void> {
  try {
    if (client.status === 'wait' || client.status === 'end') await withTimeout(client.connect(), 4_000);
    else if (client.status !== 'ready') await withTimeout(nextOutcome(client), 4_000);
    await withTimeout(client.ping(), 4_000);
  } catch (err) {
    const cause = lastError() ?? err;
    if (/^(WRONGPASS|NOAUTH)|invalid password/i.test(messageOf(cause))) throw new PermanentStartupFailure(reasonOf(cause));
    throw Object.assign(new Error(reasonOf(cause)), { code: reasonOf(cause) });
  }
}

function nextOutcome(client: RedisClient): Promise<void> {
  return new Promise((resolve, reject) => {
    const ready = () => {
      client.off('error', failed);
      resolve();
    };
    const failed = (err: Error) => {
      client.off('ready', ready);
      reject(err);
    };
    client.once('ready', ready);
    client.once('error', failed);
  });
}

function messageOf(err: unknown): string {
  return String((err as Error | undefined)?.message ?? '');
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Closes a client as a stopping process should: QUIT when Redis answers, so replies in flight are
 * read first; a plain disconnect when it does not, since QUIT would wait in the offline queue
 * (forever, with maxRetriesPerRequest null) for a Redis that may never come back.
 */
export async function quitRedis(client: RedisClient, timeoutMs = 2_000): Promise<void> {
  if (client.status !== 'ready' && client.status !== 'connect') {
    client.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([client.quit().catch(() => 'failed' as const), timedOut]);
  clearTimeout(timer);
  if (outcome !== 'OK') client.disconnect();
}
