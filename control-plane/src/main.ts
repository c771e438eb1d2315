import { runService } from '@gateway/shared';
import { startControlPlane } from './control-plane.js';
import { guardDriverCrash } from './db/driver-guard.js';
import { printSeedBanner } from './seed-banner.js';

await runService('control-plane', async () => {
  const cp = await startControlPlane(process.env);
  printSeedBanner(cp.seeded, cp.ctx.config.publicGatewayUrl, cp.port);
  cp.ctx.log.info({ port: cp.port, metrics_port: cp.metricsPort }, 'control plane ready');
  guardDriverCrash(() => void cp.replacePool(), cp.ctx.log);
  return { log: cp.ctx.log, stop: () => cp.close() };
});
