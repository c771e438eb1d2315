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

export interface DriverGuardLog {
  warn(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

/** Installs the guard; returns the function that removes it. */
export function guardDriverCrash(onCrash: () => void, log: DriverGuardLog): () => void {
  const handler = (err: Error) => {
    if (isDriverWriteCrash(err)) {
      log.warn({ err: { message: err.message } }, 'database connection dropped mid-write; replacing the connection pool');
      onCrash();
      return;
    }
    log.fatal({ err: { message: err.message, stack: err.stack } }, 'uncaught exception');
    process.exit(1);
  };
  process.on('uncaughtException', handler);
  return () => process.off('uncaughtException', handler);
}
