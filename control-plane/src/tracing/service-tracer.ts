import type { FastifyInstance } from 'fastify';

/**
 * Tracing of the control plane and the writer: a span per management request and per record
 * batch. Null when tracing is off, and then nothing of OpenTelemetry is loaded: no hook is
 * registered and the batch processor is the plain one.
 */
export interface ServiceTracer {
  /** Adds the hooks that give every request of `app` a SERVER span (continuing a caller's traceparent). */
  traceRequests(app: FastifyInstance): void;
  /** Runs one record batch inside its span. */
  traceBatch<T extends BatchFigures>(job: BatchJob, run: () => Promise<T>): Promise<T>;
  /** Exports what is buffered and stops. */
  close(): Promise<void>;
}

export interface BatchJob {
  id?: string | undefined;
  /** Attempts before this one (BullMQ's attemptsMade). */
  attemptsMade: number;
}

/** What a written batch reports (RecordWorker's BatchOutcome). */
export interface BatchFigures {
  written: number;
  replayed: number;
  invalid: number;
}
