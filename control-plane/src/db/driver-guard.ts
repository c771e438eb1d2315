/**
 * postgres.js 3.4.9 can throw from a timer when it writes to a connection PostgreSQL has just
 * dropped (a restart, a failover, pg_terminate_backend), for example the rollback of a transaction
 * whose connection died: an error no caller can catch, fatal to the process, and one that leaves
 * that connection unable to send again. Until the driver is fixed upstream, the control plane
 * recognises exactly that failure, keeps running and replaces its pool (the only cure for the
 * stuck connection). Anything else uncaught still ends the process, as Node would.
 */
export function isDriverWriteCrash(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  const stack = err.stack ?? '';
  return /reading 'write'/.test(err.message) && /nextWrite/.test(stack) && /postgres[\\/]src[\\/]connection\.js/.test(stack);
}

const DROPPED_CONNECTION = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03']);

/**
 * The same driver also runs queries of its own on a fresh connection (the array-type lookup) with
 * no caller to receive their failure: when the server drops that connection the rejection goes
 * unhandled. Only a dropped-connection error raised inside the driver is recognised.
 */
export function isDriverDroppedConnection(reason: unknown): boolean {
  const err = reason as { code?: unknown; stack?: unknown } | null;
  if (err === null || typeof err !== 'object' || typeof err.code !== 'string' || !DROPPED_CONNECTION.has(err.code)) return false;
  return typeof err.stack === 'string' && /postgres[\\/]src[\\/]connection\.js/.test(err.stack);
}

export interface DriverGuardLog {
  warn(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

/** Installs the guard; returns the function that removes it. */
export function guardDriverCrash(onCrash: () => void, log: DriverGuardLog): () => void {
  // Both failures leave nothing to retry in the caller; a fresh pool is the cure for the stuck
  // connection the first one leaves behind.
  const handler = (err: Error) => {
    if (isDriverWriteCrash(err)) {
      log.warn({ err: { message: err.message } }, 'database connection dropped mid-write; replacing the connection pool');
      onCrash();
      return;
    }
    log.fatal({ err: { message: err.message, stack: err.stack } }, 'uncaught exception');
    process.exit(1);
  };
  const rejection = (reason: unknown) => {
    if (isDriverDroppedConnection(reason)) {
      log.warn({ err: { code: (reason as { code: string }).code } }, 'database connection dropped during a driver query; replacing the connection pool');
      onCrash();
      return;
    }
    const err = reason instanceof Error ? reason : new Error(String(reason));
    log.fatal({ err: { message: err.message, stack: err.stack } }, 'unhandled rejection');
    process.exit(1);
  };
  process.on('uncaughtException', handler);
  process.on('unhandledRejection', rejection);
  return () => {
    process.off('uncaughtException', handler);
    process.off('unhandledRejection', rejection);
  };
}
