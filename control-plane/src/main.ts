import { ConfigError, StartupError } from '@gateway/shared';
import { startControlPlane } from './control-plane.js';
import { printSeedBanner } from './seed-banner.js';

try {
  const cp = await startControlPlane(process.env);
  printSeedBanner(cp.seeded, cp.ctx.config.publicGatewayUrl, cp.port);
  cp.ctx.log.info({ port: cp.port }, 'control plane listening');
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    cp.ctx.log.info({ signal }, 'draining');
    cp.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (err) {
  if (err instanceof StartupError || err instanceof ConfigError) {
    process.stderr.write(`control-plane: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
