import { runService } from '@gateway/shared';
import { UwsLoadError } from './http/uws.js';
import { startProxy } from './proxy.js';

await runService(
  'proxy',
  async () => {
    const proxy = await startProxy(process.env);
    return { log: proxy.log, stop: () => proxy.drain() };
  },
  [UwsLoadError],
);
