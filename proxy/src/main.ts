import { loadProxyConfig, runService } from '@gateway/shared';
import { UwsLoadError } from './http/uws.js';
import { startProxy } from './proxy.js';
import { startWorkerPool } from './workers/worker-pool.js';

await runService(
  'proxy',
  async () => {
    const config = loadProxyConfig(process.env);
    if (config.workers > 1) {
      const pool = await startWorkerPool(process.env, config);
      return { log: pool.log, stop: () => pool.drain() };
    }
    const proxy = await startProxy(process.env);
    return { log: proxy.log, stop: () => proxy.drain() };
  },
  [UwsLoadError],
);
