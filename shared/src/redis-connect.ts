import { Redis, type RedisOptions } from 'ioredis';
import { currentStartupWait, PermanentStartupFailure, reasonOf, waitForDependency } from './startup-wait.js';

/**
 * Opens a Redis connection and proves it answers before the caller goes on. A Redis that is not
 * there yet is waited for (the process's start-up wait, logged per step); one still away at its
 * end stops the start with a message naming the URL. After that first answer the connection
 * reconnects forever with a capped backoff.
 */
export async function connectRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    ...options,
  });
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
 * One attempt of the start-up wait. The first connects; while ioredis reconnects on its own (its
 * retryStrategy) later ones wait for the outcome of its next try rather than start another.
 */
async function answered(client: Redis, lastError: () => unknown): Promise<void> {
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

function nextOutcome(client: Redis): Promise<void> {
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
