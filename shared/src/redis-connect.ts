import { Redis, type RedisOptions } from 'ioredis';
import { StartupError, unreachableMessage } from './startup.js';

/**
 * Opens a Redis connection and proves it answers before the caller goes on, so a process started
 * without Redis exits with a message naming the URL instead of retrying silently. After that first
 * answer the connection reconnects forever with a capped backoff.
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
  // Until the first connect succeeds errors are reported by connect() (the socket's own error,
  // ECONNREFUSED and the like, says more than ioredis's "Connection is closed"); afterwards the
  // owner watches 'error' events itself, and an unwatched one must not crash the process.
  let firstError: unknown;
  client.on('error', (err) => {
    firstError ??= err;
  });
  try {
    await withTimeout(client.connect(), 4_000);
    await client.ping();
  } catch (err) {
    client.disconnect();
    throw new StartupError(unreachableMessage('redis', url, reasonOf(firstError ?? err)));
  }
  return client;
}

function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message ?? 'unknown error';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
