import { startToolServer } from './mcp-tool-server.js';

/** `node bench/dist/mcp-tool-server-main.js [port]`: the mcp scenario's MCP server; prints `listening <port>` once it accepts. */
const server = await startToolServer(Number(process.argv[2] ?? 0));
process.stdout.write(`listening ${server.port}\n`);
const stop = () => void server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
