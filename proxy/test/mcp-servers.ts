import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * Real MCP servers (the official SDK's McpServer over Streamable HTTP) on free ports, for the
 * gateway's tests: one stateful (sessions, SSE answers), one stateless (JSON answers). Each keeps
 * every request's headers, every JSON-RPC message its McpServer was handed, and every tool call,
 * prompt get, resource read and completion it ran, so a test can assert on what reached it.
 * Prompts: `summary` (a completable `topic`) and `secret_prompt`; resources: `docs://public/readme`,
 * `docs://private/keys` and the templates `docs://public/{page}` and `docs://private/{file}`.
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
  /** Every JSON-RPC message handed to an McpServer (requests, notifications, client answers), in order. */
  messages: JSONRPCMessage[];
  /** Prompts got, by name, in order. */
  prompts: string[];
  /** Resources read, by URI, in order. */
  reads: string[];
  /** Completions answered: `prompt:<name>` or `resource:<uri template>`. */
  completions: string[];
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

function prompts(server: McpServer, state: TestMcpServer): void {
  const topics = ['billing', 'bugs', 'onboarding'];
  server.registerPrompt(
    'summary',
    {
      description: 'Summarises a topic.',
      argsSchema: {
        topic: completable(z.string(), (value) => {
          state.completions.push('prompt:summary');
          return topics.filter((t) => t.startsWith(value));
        }),
      },
    },
    ({ topic }) => {
      state.prompts.push('summary');
      return { messages: [{ role: 'user', content: { type: 'text', text: `Summarise ${topic}.` } }] };
    },
  );
  server.registerPrompt('secret_prompt', { description: 'A prompt no scoped test project may get.' }, () => {
    state.prompts.push('secret_prompt');
    return { messages: [{ role: 'user', content: { type: 'text', text: 'the secret prompt' } }] };
  });
}

function resources(server: McpServer, state: TestMcpServer): void {
  const read = (uri: URL, text: string) => {
    state.reads.push(uri.href);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text }] };
  };
  server.registerResource('readme', 'docs://public/readme', { description: 'The public readme.', mimeType: 'text/plain' }, (uri) => read(uri, 'public readme'));
  server.registerResource('keys', 'docs://private/keys', { description: 'Keys no scoped test project may read.', mimeType: 'text/plain' }, (uri) => read(uri, 'private keys'));
  const pages = ['intro', 'faq'];
  server.registerResource(
    'public-page',
    new ResourceTemplate('docs://public/{page}', {
      list: async () => ({ resources: [{ uri: 'docs://public/intro', name: 'intro' }] }),
      complete: {
        page: (value) => {
          state.completions.push('resource:docs://public/{page}');
          return pages.filter((p) => p.startsWith(value));
        },
      },
    }),
    { description: 'A public page.', mimeType: 'text/plain' },
    (uri, { page }) => read(uri, `public page ${String(page)}`),
  );
  server.registerResource(
    'private-file',
    new ResourceTemplate('docs://private/{file}', {
      list: async () => ({ resources: [{ uri: 'docs://private/salaries', name: 'salaries' }] }),
      complete: {
        file: (value) => {
          state.completions.push('resource:docs://private/{file}');
          return ['salaries'].filter((f) => f.startsWith(value));
        },
      },
    }),
    { description: 'A private file.', mimeType: 'text/plain' },
    (uri, { file }) => read(uri, `private file ${String(file)}`),
  );
}

function newServer(state: TestMcpServer): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
  tools(server, state);
  prompts(server, state);
  resources(server, state);
  return server;
}

/** Connects the server and keeps every message the transport hands it. */
async function connected(server: McpServer, transport: StreamableHTTPServerTransport, state: TestMcpServer): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    state.messages.push(message);
    deliver?.(message, extra);
  };
}

function newState(): TestMcpServer {
  return { requests: [], calls: [], cancelled: 0, waiting: 0, messages: [], prompts: [], reads: [], completions: [] } as unknown as TestMcpServer;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Sessions (Mcp-Session-Id), answers as SSE streams, a server-initiated stream on GET. */
export async function startStatefulMcpServer(): Promise<TestMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const state = newState();
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
      void connected(newServer(state), created, state).then(() => created.handleRequest(req, res));
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
  const state = newState();
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
    void connected(server, transport, state).then(() => transport.handleRequest(req, res));
  });
  state.url = await listen(http);
  state.close = async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  };
  return state;
}
