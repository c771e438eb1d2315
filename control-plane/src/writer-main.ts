import { runService } from '@gateway/shared';
import { startWriter } from './writer/start-writer.js';

/** `npm run start:writer`: one writer process, for running writers apart from the control plane. */
await runService('writer', async () => {
  const writer = await startWriter(process.env);
  writer.log.info({ concurrency: writer.config.concurrency, port: writer.port }, 'writer started');
  return { log: writer.log, stop: () => writer.close() };
});
