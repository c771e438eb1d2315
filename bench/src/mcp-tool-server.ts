import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * The MCP server of the mcp scenario: the official SDK's `McpServer` on its Streamable HTTP
 * transport (sessions, JSON answers) with one tool, `ping`, that answers at once.
 */
export interface ToolServer {
  port: number;
  close(): Promise<void>;
}

export async function startToolServer(port = 0): Promise<ToolServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (existing !== undefined) return void existing.handleRequest(req, res);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    const server = new McpServer({ name: 'bench-tools', version: '1.0.0' });
    server.registerTool('ping', { description: 'Answers at once.' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}
