import { createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import { AggregatorRegistry } from 'prom-client';
import { pino, type Logger } from 'pino';
import { ConfigError, logRedaction, startMetricsServer, StartupError, type Env, type MetricsServer, type ProxyConfig } from '@gateway/shared';
import { UwsLoadError } from '../http/uws.js';
import { metricsPortError } from '../startup-errors.js';
import type { FromWorker, Question, ToWorker, WorkerStart } from './worker-messages.js';

/**
 * PROXY_WORKERS data planes in one process, one per worker thread, all listening on the same port
 * (uWebSockets.js sets SO_REUSEPORT; the kernel spreads connections across them). Each worker is a
 * whole proxy, exactly as coherent as a separate replica: it subscribes to invalidations itself
 * (so every worker applies every deletion and cuts its own requests in flight), leases its own
 * quota blocks, counts its own rate-limit windows and runs its own record pipeline. The main
 * thread only starts them, serves the merged metrics on METRICS_PORT, and drains them.
 */
export interface WorkerPool {
  port: number;
  metricsPort: number;
  workers: number;
  log: Logger;
  drain(): Promise<void>;
}

const OPERATOR_ERRORS: Record<string, new (message: string) => Error> = {
  ConfigError,
  StartupError,
  UwsLoadError,
};

interface RunningWorker {
  worker: Worker;
  exited: Promise<void>;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function startWorkerPool(env: Env, config: ProxyConfig): Promise<WorkerPool> {
  const log = pino({ level: config.logLevel, name: 'proxy', redact: logRedaction() });
  const running: RunningWorker[] = [];
  const pending = new Map<number, (msg: FromWorker & { type: 'answer' }) => void>();
  let nextId = 0;

  const spawn = (index: number, port: number): Promise<number> => {
    const start: WorkerStart = { env: { ...env }, index, port };
    const worker = new Worker(new URL('./proxy-worker.js', import.meta.url), { workerData: start });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    running.push({ worker, exited });
    return new Promise((resolve, reject) => {
      worker.on('message', (msg: FromWorker) => {
        if (msg.type === 'listening') resolve(msg.port);
        else if (msg.type === 'failed') reject(new (OPERATOR_ERRORS[msg.kind] ?? StartupError)(msg.message));
        else pending.get(msg.id)?.(msg);
      });
      // Whatever stops a worker before it listens ends the start with one line, not a stack.
      worker.once('error', (err) => reject(new StartupError(`proxy worker ${index} could not start: ${err.message}`)));
      worker.once('exit', (code) => {
        reject(new StartupError(`proxy worker ${index} exited with code ${code} before listening`));
        if (started && !draining) {
          // A worker that dies takes its share of the port with it: stop the process so that the
          // orchestrator restarts it whole, rather than serve on with less than was configured.
          log.fatal({ worker: index, code }, 'proxy worker exited; stopping');
          void pool.drain().finally(() => process.exit(1));
        }
      });
    });
  };

  const ask = (what: Question): Promise<(FromWorker & { type: 'answer' })[]> =>
    Promise.all(
      running.map(
        ({ worker }) =>
          new Promise<FromWorker & { type: 'answer' }>((resolve) => {
            const id = nextId++;
            pending.set(id, (msg) => {
              pending.delete(id);
              resolve(msg);
            });
            worker.postMessage({ type: 'ask', id, what } satisfies ToWorker);
          }),
      ),
    );

  let draining = false;
  let started = false;
  let ops: MetricsServer | null = null;
  const pool: WorkerPool = {
    port: 0,
    metricsPort: 0,
    workers: config.workers,
    log,
    async drain() {
      if (draining) return;
      draining = true;
      for (const { worker } of running) worker.postMessage({ type: 'drain' } satisfies ToWorker);
      await Promise.all(running.map((r) => r.exited));
      await ops?.close();
    },
  };

  try {
    // uWebSockets.js shares a port between sockets only when it is named (an ephemeral port is
    // bound exclusively), so PROXY_PORT=0 is resolved to a free port first.
    const port = config.port === 0 ? await freePort(config.host) : config.port;
    await Promise.all(Array.from({ length: config.workers }, (_, i) => spawn(i, port)));
    pool.port = port;
    const merged = {
      contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
      metrics: async () => {
        const answers = await ask('metrics');
        return AggregatorRegistry.aggregate(answers.map((a) => a.metrics ?? [])).metrics();
      },
    };
    ops = await startMetricsServer(config.host, config.metricsPort, merged, async () => {
      const answers = await ask('ready');
      return { workers: answers.every((a) => a.ready === true) };
    }).catch((err: Error) => {
      throw metricsPortError(config.metricsPort, err);
    });
    pool.metricsPort = ops.port;
  } catch (err) {
    await pool.drain();
    throw err;
  }
  started = true;
  log.info({ port: pool.port, metricsPort: pool.metricsPort, workers: config.workers }, 'proxy listening');
  return pool;
}
