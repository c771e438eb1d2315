import { startMockUpstream } from './mock-upstream.js';

/** `node bench/dist/mock-upstream-main.js [port]`: prints `listening <port>` once it accepts. */
const port = Number(process.argv[2] ?? process.env.MOCK_UPSTREAM_PORT ?? 0);
const chunks = process.env.MOCK_CHUNKS ? Number(process.env.MOCK_CHUNKS) : undefined;
const gap = process.env.MOCK_GAP_MS ? Number(process.env.MOCK_GAP_MS) : undefined;
const upstream = await startMockUpstream({ port, defaults: { ...(chunks ? { chunks } : {}), ...(gap ? { gap_ms: gap } : {}) } });
process.stdout.write(`listening ${upstream.port}\n`);
const stop = () => {
  upstream.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
