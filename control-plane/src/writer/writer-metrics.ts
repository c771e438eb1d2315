import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface WriterMetrics {
  written: Counter<'table'>;
  replayed: Counter<'table'>;
  invalid: Counter<'table'>;
  batches: Counter;
  retried: Counter;
  batchSeconds: Histogram;
  postgresUp: Gauge;
}

const QUEUE_READ_TIMEOUT_MS = 2_000;

/**
 * The writer's Prometheus metrics. Queue depth and the oldest job's age are read from Redis at
 * scrape time, so they are right even when this writer is paused or idle; a scrape while Redis is
 * away keeps the last values rather than hanging.
 */
/** `queue`: the record queue, or all of them (RECORD_QUEUES), summed. */
export function writerMetrics(registry: Registry, queue: Queue | readonly Queue[]): WriterMetrics {
  const queues = Array.isArray(queue) ? (queue as readonly Queue[]) : [queue as Queue];
  const registers = [registry];
  let last = { waiting: 0, delayed: 0, active: 0, oldestAge: 0 };
  let reading: Promise<void> | null = null;
  const read = () => {
    reading ??= Promise.all(queues.map(readQueue))
      .then(sumQueues)
      .then((now) => {
        last = now;
      })
      .catch(() => {})
      .finally(() => {
        reading = null;
      });
    return reading;
  };

  new Gauge({
    name: 'gateway_writer_queue_depth',
    help: 'Record batches in the queue not yet written: waiting + delayed (retrying) + active',
    registers,
    async collect() {
      await read();
      this.set(last.waiting + last.delayed + last.active);
    },
  });
  new Gauge({
    name: 'gateway_writer_queue_jobs',
    help: 'Record batches in the queue by state',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      await read();
      this.set({ state: 'waiting' }, last.waiting);
      this.set({ state: 'delayed' }, last.delayed);
      this.set({ state: 'active' }, last.active);
    },
  });
  new Gauge({
    name: 'gateway_writer_oldest_job_age_seconds',
    help: 'Age of the oldest record batch waiting or retrying in the queue (0 when empty)',
    registers,
    async collect() {
      await read();
      this.set(last.oldestAge);
    },
  });

  return {
    written: new Counter({ name: 'gateway_writer_records_written_total', help: 'Records inserted into PostgreSQL', labelNames: ['table'] as const, registers }),
    replayed: new Counter({
      name: 'gateway_writer_records_replayed_total',
      help: 'Records already in PostgreSQL when their batch arrived (a retried or re-sent batch), skipped',
      labelNames: ['table'] as const,
      registers,
    }),
    invalid: new Counter({ name: 'gateway_writer_invalid_records_total', help: 'Records dropped as invalid', labelNames: ['table'] as const, registers }),
    batches: new Counter({ name: 'gateway_writer_batches_total', help: 'Record batches written', registers }),
    retried: new Counter({ name: 'gateway_writer_batches_retried_total', help: 'Batch writes that failed and were left for BullMQ to retry', registers }),
    batchSeconds: new Histogram({
      name: 'gateway_writer_batch_seconds',
      help: 'Time to write one batch (one transaction)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    postgresUp: new Gauge({ name: 'gateway_writer_postgres_up', help: '1 while PostgreSQL accepts writes, 0 while this writer waits for it', registers }),
  };
}

function sumQueues(all: Awaited<ReturnType<typeof readQueue>>[]) {
  return {
    waiting: all.reduce((n, q) => n + q.waiting, 0),
    delayed: all.reduce((n, q) => n + q.delayed, 0),
    active: all.reduce((n, q) => n + q.active, 0),
    oldestAge: Math.max(0, ...all.map((q) => q.oldestAge)),
  };
}

async function readQueue(queue: Queue) {
  const work = (async () => {
    const counts = await queue.getJobCounts('waiting', 'delayed', 'active');
    // BullMQ lists waiting jobs newest first; asc reads from the oldest end.
    const [oldestWaiting] = await queue.getJobs(['waiting'], 0, 0, true);
    const [nextDelayed] = await queue.getJobs(['delayed'], 0, 0, true);
    const now = Date.now();
    const ages = [oldestWaiting, nextDelayed].filter((j) => j !== undefined).map((j) => (now - j.timestamp) / 1000);
    return {
      waiting: counts.waiting ?? 0,
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      oldestAge: ages.length > 0 ? Math.max(0, ...ages) : 0,
    };
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('queue read timed out')), QUEUE_READ_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
