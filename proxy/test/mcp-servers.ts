import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * Real MCP servers (the official SDK's McpServer over Streamable HTTP) on free ports, for the
 * gateway's tests: one stateful (sessions, SSE answers), one stateless (JSON answers). Each keeps
 * every request's headers and every tool call it ran, so a test can assert on what reached it.
 */
export interface TestMcpServer {
  url: string;
  /** Method and headers of every HTTP request received. */
  requests: { method: string; headers: IncomingHttpHeaders }[];
  /** Tools run, by name, in order. */
  calls: string[];
  /** Calls of `wait` that saw their request cancelled. */
  cancelled: number;
  /** Calls of `wait` that started. */
  waiting: number;
  close(): Promise<void>;
}

function tools(server: McpServer, state: TestMcpServer): void {
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() } }, async ({ text }) => {
    state.calls.push('echo');
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('admin_reset', { description: 'A tool no test project may call.' }, async () => {
    state.calls.push('admin_reset');
    return { content: [{ type: 'text', text: 'reset' }] };
  });
  server.registerTool('slow', { description: 'Reports progress, then answers.', inputSchema: { steps: z.number().int() } }, async ({ steps }, extra) => {
    state.calls.push('slow');
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await new Promise((r) => setTimeout(r, 20));
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
    }
    return { content: [{ type: 'text', text: `done after ${steps}` }] };
  });
  server.registerTool('wait', { description: 'Runs until its request is cancelled.' }, async (extra) => {
    state.calls.push('wait');
    state.waiting++;
    await new Promise<void>((resolve) => {
      if (extra.signal.aborted) return resolve();
      extra.signal.addEventListener('abort', () => resolve(), { once: true });
      setTimeout(resolve, 30_000).unref();
    });
    if (extra.signal.aborted) state.cancelled++;
    return { content: [{ type: 'text', text: 'waited' }] };
  });
  server.registerTool('failing', { description: 'Always fails.' }, async () => {
    state.calls.push('failing');
    return { isError: true, content: [{ type: 'text', text: 'it failed' }] };
  });
}

function newServer(state: TestMcpServer): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
  tools(server, state);
  return server;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Sessions (Mcp-Session-Id), answers as SSE streams, a server-initiated stream on GET. */
export async function startStatefulMcpServer(): Promise<TestMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const state = { requests: [], calls: [], cancelled: 0, waiting: 0 } as unknown as TestMcpServer;
  const http = createServer((req, res) => {
    state.requests.push({ method: req.method ?? '', headers: req.headers });
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (transport === undefined) {
      if (req.method !== 'POST' || sid !== undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) });
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      transport = created;
      void newServer(state).connect(created).then(() => created.handleRequest(req, res));
      return;
    }
    void transport.handleRequest(req, res);
  });
  state.url = await listen(http);
  state.close = async () => {
    for (const t of transports.values()) await t.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  };
  return state;
}

/** No sessions: a fresh server per request, answers as plain JSON. */
export async function startStatelessMcpServer(): Promise<TestMcpServer> {
  const state = { requests: [], calls: [], cancelled: 0, waiting: 0 } as unknown as TestMcpServer;
  const http = createServer((req, res) => {
    state.requests.push({ method: req.method ?? '', headers: req.headers });
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = newServer(state);
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  state.url = await listen(http);
  state.close = async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  };
  return state;
}
