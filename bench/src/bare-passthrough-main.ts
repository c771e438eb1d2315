import { startBarePassthrough } from './bare-passthrough.js';

/** `UPSTREAM_URL=http://127.0.0.1:9100 node bench/dist/bare-passthrough-main.js [port]`: prints `listening <port>`. */
const upstream = process.env.UPSTREAM_URL;
if (!upstream) {
  process.stderr.write('bare pass-through: set UPSTREAM_URL to the upstream origin\n');
  process.exit(1);
}
const port = Number(process.argv[2] ?? process.env.BARE_PORT ?? 0);
const server = await startBarePassthrough({ upstream, port });
process.stdout.write(`listening ${server.port}\n`);
const stop = () => {
  void server.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
