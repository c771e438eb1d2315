import { parentPort, workerData } from 'node:worker_threads';
import { startProxy } from '../proxy.js';
import type { FromWorker, ToWorker, WorkerStart } from './worker-messages.js';

/**
 * One proxy worker thread: a whole data plane (uWebSockets.js app on the shared port, key map,
 * invalidation subscriber, quota leases, rate limits, record pipeline) that answers the main
 * thread's questions (metrics, readiness) and drains when told to.
 */
const port = parentPort;
if (port === null) throw new Error('proxy-worker.js runs as a worker thread');
const start = workerData as WorkerStart;
const send = (msg: FromWorker) => port.postMessage(msg);

try {
  const proxy = await startProxy({ ...start.env, PROXY_PORT: String(start.port) }, { worker: start.index });
  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'drain') {
      // Drained means answered, flushed and disconnected: the thread ends here rather than when its
      // event loop empties, which a Redis Cluster client's timers can hold up for seconds.
      void proxy.drain().then(
        () => {
          port.close();
          process.exit(0);
        },
        () => {
          port.close();
          process.exit(1);
        },
      );
    } else if (msg.what === 'metrics') {
      void proxy.deps.metrics.registry.getMetricsAsJSON().then((metrics) => send({ type: 'answer', id: msg.id, metrics }));
    } else {
      send({ type: 'answer', id: msg.id, ready: proxy.ready() });
    }
  });
  send({ type: 'listening', port: proxy.port });
} catch (err) {
  send({ type: 'failed', kind: (err as Error).name, message: (err as Error).message });
  port.close();
}
