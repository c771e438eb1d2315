import type { MetricObjectWithValues, MetricValue } from 'prom-client';

export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/**
 * What the main thread and proxy workers say to each other. Plain objects (structured clone);
 * nothing here leaves the process, so no version field is needed.
 */
export interface WorkerStart {
  env: Record<string, string | undefined>;
  index: number;
  /** The port every worker listens on (SO_REUSEPORT); 0 for the first worker to choose one. */
  port: number;
}

export type Question = 'metrics' | 'ready';

export type ToWorker = { type: 'ask'; id: number; what: Question } | { type: 'drain' };

export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; kind: string; message: string }
  | { type: 'answer'; id: number; metrics?: WorkerMetrics; ready?: boolean };
