import { StepTimes } from '@gateway/proxy/step-clock';
import { startBarePassthrough } from './bare-passthrough.js';

/** `UPSTREAM_URL=http://127.0.0.1:9100 node bench/dist/bare-passthrough-main.js [port]`: prints `listening <port>`. */
const upstream = process.env.UPSTREAM_URL;
if (!upstream) {
  process.stderr.write('bare pass-through: set UPSTREAM_URL to the upstream origin\n');
  process.exit(1);
}
const port = Number(process.argv[2] ?? process.env.BARE_PORT ?? 0);
// The gateway's bench flag, read the same way: the breakdown of the ceiling beside the gateway's.
const stepTimes = process.env.STEP_TIMES_FILE ? new StepTimes(process.env.STEP_TIMES_FILE) : null;
const server = await startBarePassthrough({ upstream, port, stepTimes });
process.stdout.write(`listening ${server.port}\n`);
const stop = () => {
  stepTimes?.write();
  void server.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
