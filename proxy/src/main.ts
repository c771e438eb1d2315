import { loadProxyConfig, runService } from '@gateway/shared';
import { UwsLoadError } from './http/uws.js';

// Each path loads only what it runs: with worker threads, the data plane's modules (BullMQ,
// ioredis, undici, the providers) load in the workers, not a third time on the main thread, so
// a replica listens sooner.
await runService(
  'proxy',
  async () => {
    const config = loadProxyConfig(process.env);
    if (config.workers > 1) {
      const { startWorkerPool } = await import('./workers/worker-pool.js');
      const pool = await startWorkerPool(process.env, config);
      return { log: pool.log, stop: () => pool.drain() };
    }
    const { startProxy } = await import('./proxy.js');
    const proxy = await startProxy(process.env);
    return { log: proxy.log, stop: () => proxy.drain() };
  },
  [UwsLoadError],
);
