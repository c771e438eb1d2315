import { ConfigError } from './config/env.js';
import { StartupError } from './startup.js';

/**
 * The life of a service process: start it, drain it on SIGTERM/SIGINT and exit 0 (1 if the drain
 * failed), and turn a start-up failure an operator can fix (a bad variable, an unreachable
 * dependency) into one line on stderr and exit code 1 instead of a stack trace.
 */
export interface RunningService {
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  stop(): Promise<void>;
}

export type ErrorClass = abstract new (...args: never[]) => Error;

export async function runService(name: string, start: () => Promise<RunningService>, operatorErrors: readonly ErrorClass[] = []): Promise<void> {
  // Listening from the first moment: a stop asked for while the service starts (it may be waiting
  // for Redis or PostgreSQL for a while) ends the process at once with 0, as there is nothing to
  // drain yet, rather than leave it to the signal's default action.
  let service: RunningService | null = null;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (service === null) {
      process.stderr.write(`${name}: ${signal} while starting; exiting\n`);
      process.exit(0);
    }
    const running = service;
    running.log.info({ signal }, 'draining');
    running.stop().then(
      () => process.exit(0),
      (err: Error) => {
        running.log.error({ err: { message: err.message } }, 'drain failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    service = await start();
  } catch (err) {
    if ([StartupError, ConfigError, ...operatorErrors].some((kind) => err instanceof kind)) {
      process.stderr.write(`${name}: ${(err as Error).message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
