import { loadProxyConfig, runService } from '@gateway/shared';
import { UwsLoadError } from './http/uws.js';
import { LOW_STREAM_CAPACITY, streamCapacity } from './workers/stream-capacity.js';

function sayCapacity(log: { info(o: object, m: string): void; warn(o: object, m: string): void }): void {
  const { openFiles, streams } = streamCapacity();
  if (streams === null) return;
  const fields = { open_files_limit: openFiles, streams };
  if (streams < LOW_STREAM_CAPACITY) log.warn(fields, `the open-files limit allows ${streams} concurrent streams (two sockets each); raise it (ulimit -n, LimitNOFILE) to hold more`);
  else log.info(fields, `the open-files limit allows ${streams} concurrent streams`);
}

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
      sayCapacity(pool.log);
      return { log: pool.log, stop: () => pool.drain() };
    }
    const { startProxy } = await import('./proxy.js');
    const proxy = await startProxy(process.env);
    sayCapacity(proxy.log);
    return { log: proxy.log, stop: () => proxy.drain() };
  },
  [UwsLoadError],
);
