import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { freePort } from '../../test-support/services.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { startStatefulMcpServer, startStatelessMcpServer, type TestMcpServer } from './mcp-servers.js';

/**
 * The message allow-list of `/mcp/{server}` end to end: real MCP servers (the official SDK, one
 * stateful answering in SSE, one stateless answering in JSON) holding tools, prompts, resources
 * and resource templates; projects whose `mcp` setting (made through the management API) names
 * the prompts and resources they may use; the official MCP client for the normal flows and raw
 * JSON-RPC for what no well-behaved client sends (unknown methods and notifications, batches).
 * What the servers were handed is kept by them, so "refused" also means "never seen", and each
 * refusal's audit event is read back from PostgreSQL through the writer.
 */
const PROTOCOL = '2025-06-18';
let docs: TestMcpServer;
let tickets: TestMcpServer;
let cp: ControlPlaneHarness;
let writer: Writer;
let proxy: Proxy;
/** prompts ['summary'], resources ['docs://public/*'] on both servers. */
let scoped: { id: string; key: string };
/** Tools only: no prompts or resources fields. */
let toolsOnly: { id: string; key: string };
/** Every prompt and resource ("*"). */
let everything: { id: string; key: string };
const clients: Client[] = [];

const gateway = (path: string) => new URL(`http://127.0.0.1:${proxy.port}${path}`);
const SERVERS = ['docs', 'tickets'] as const;
const serverNamed = (name: (typeof SERVERS)[number]) => (name === 'docs' ? docs : tickets);

beforeAll(async () => {
  [docs, tickets] = await Promise.all([startStatefulMcpServer(), startStatelessMcpServer()]);
  cp = await startControlPlane('mcpmsg');
  const dir = mkdtempSync(join(tmpdir(), 'gw-mcpmsg-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    `providers:
  - { name: mock, type: mock, models: [mock-1] }
mcp_servers:
  - { name: docs, url: "${docs.url}" }
  - { name: tickets, url: "${tickets.url}" }
`,
  );
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, DRAIN_TIMEOUT_MS: '1000' });
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
  const narrow = { tools: ['echo'], prompts: ['summary'], resources: ['docs://public/*'] };
  scoped = await newProject('mcpmsg-scoped', { servers: { docs: narrow, tickets: narrow } });
  toolsOnly = await newProject('mcpmsg-tools-only', { servers: { docs: { tools: '*' }, tickets: { tools: '*' } } });
  const all = { tools: '*', prompts: '*', resources: '*' };
  everything = await newProject('mcpmsg-everything', { servers: { docs: all, tickets: all } });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await proxy?.drain();
  await writer?.close();
  await cp?.close();
  await docs?.close();
  await tickets?.close();
});

async function newProject(name: string, mcp: unknown): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name } });
  expect(created.status).toBe(201);
  const patched = await cp.api('PATCH', `/v1/projects/${created.body.id}`, { token: cp.adminToken, body: { mcp } });
  expect(patched.status, patched.text).toBe(200);
  // The API answers the setting as given, and the row holds it.
  expect(patched.body.mcp).toEqual(mcp);
  const [row] = await cp.sql<{ mcp: unknown }[]>`SELECT mcp FROM projects WHERE id = ${created.body.id}`;
  expect(row!.mcp).toEqual(mcp);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  expect(key.status).toBe(201);
  return { id: created.body.id, key: key.body.key };
}

/** The official client on `/mcp/{server}` with the project's key. */
async function connect(server: string, key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(gateway(`/mcp/${server}`), { requestInit: { headers: { 'x-api-key': key } } });
  const client = new Client({ name: 'mcpmsg-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A call the gateway refused: the JSON-RPC error the client threw, checked to be the gateway's. */
async function refused(call: Promise<unknown>, rpcCode: number): Promise<McpError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  const error = err as McpError;
  expect(error.code).toBe(rpcCode);
  expect((error.data as { code?: string } | undefined)?.code).toBe('MCP_NOT_ALLOWED');
  expect(error.message).toContain('MCP_NOT_ALLOWED:');
  return error;
}

/** The messages of a Streamable HTTP answer, whether one JSON body (message or batch) or an SSE stream. */
async function messagesOf(res: Response): Promise<any[]> {
  const body = await res.text();
  if (body === '') return [];
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return body
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice('data:'.length).trim()));
  }
  const parsed: unknown = JSON.parse(body);
  return Array.isArray(parsed) ? parsed : [parsed];
}

interface Raw {
  /** POSTs a JSON-RPC message or batch in the session, with an x-request-id when given. */
  post(body: unknown, requestId?: string): Promise<Response>;
}

/** A session opened by hand (initialize, initialized) on `/mcp/{server}` or `/mcp`, for raw JSON-RPC. */
async function rawSession(path: string, key: string): Promise<Raw> {
  const base = { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(gateway(path), {
    method: 'POST',
    headers: base,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  expect(init.status).toBe(200);
  const [answer] = await messagesOf(init);
  expect(answer.result.protocolVersion).toBe(PROTOCOL);
  const sessionId = init.headers.get('mcp-session-id');
  const headers: Record<string, string> = { ...base, 'mcp-protocol-version': PROTOCOL };
  if (sessionId !== null) headers['mcp-session-id'] = sessionId;
  const raw: Raw = {
    post: (body, requestId) => fetch(gateway(path), { method: 'POST', headers: requestId === undefined ? headers : { ...headers, 'x-request-id': requestId }, body: JSON.stringify(body) }),
  };
  expect((await raw.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  return raw;
}

/** Requests and notifications of `method` the server was handed, with their params. */
function seen(server: TestMcpServer, method: string): any[] {
  return server.messages.filter((m: JSONRPCMessage) => 'method' in m && m.method === method).map((m) => ('params' in m ? m.params : undefined) ?? {});
}

function uniqueId(label: string): string {
  return `mcpmsg-${label}-${Math.random().toString(36).slice(2)}`;
}

/** The audit events of a project, once `count` of them match. */
async function auditOf(projectId: string, match: (e: any) => boolean, count = 1): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await cp.api('GET', `/v1/audit?project_id=${projectId}&limit=1000`, { token: cp.adminToken });
    found = (res.body.data as any[]).filter(match);
    return found.length >= count;
  }, 'audit events written');
  return found;
}

const ALL_PROMPTS = ['secret_prompt', 'summary'];
const ALL_RESOURCES = ['docs://private/keys', 'docs://private/salaries', 'docs://public/intro', 'docs://public/readme'];
const ALL_TEMPLATES = ['docs://private/{file}', 'docs://public/{page}'];

describe('MCP message policy on /mcp/{server}', () => {
  it.each(SERVERS)('lists only the allowed prompts, resources and templates (%s)', async (name) => {
    const scopedClient = await connect(name, scoped.key);
    expect((await scopedClient.listPrompts()).prompts.map((p) => p.name)).toEqual(['summary']);
    expect((await scopedClient.listResources()).resources.map((r) => r.uri).sort()).toEqual(['docs://public/intro', 'docs://public/readme']);
    expect((await scopedClient.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['docs://public/{page}']);
    // The server itself lists everything: "*" passes its answers whole.
    const all = await connect(name, everything.key);
    expect((await all.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(ALL_PROMPTS);
    expect((await all.listResources()).resources.map((r) => r.uri).sort()).toEqual(ALL_RESOURCES);
    expect((await all.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(ALL_TEMPLATES);
    // No prompts or resources fields: none of either.
    const bare = await connect(name, toolsOnly.key);
    expect((await bare.listPrompts()).prompts).toEqual([]);
    expect((await bare.listResources()).resources).toEqual([]);
    expect((await bare.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await bare.listTools()).tools.length).toBeGreaterThan(1);
  });

  it.each(SERVERS)('serves the allowed prompt and resources, and answers the others itself: the server never sees them (%s)', async (name) => {
    const server = serverNamed(name);
    const client = await connect(name, scoped.key);
    const prompt = await client.getPrompt({ name: 'summary', arguments: { topic: 'billing' } });
    expect(prompt.messages[0]!.content).toMatchObject({ type: 'text', text: 'Summarise billing.' });
    expect((await client.readResource({ uri: 'docs://public/readme' })).contents[0]).toMatchObject({ uri: 'docs://public/readme', text: 'public readme' });
    expect((await client.readResource({ uri: 'docs://public/faq' })).contents[0]).toMatchObject({ text: 'public page faq' });
    expect(server.prompts).toContain('summary');
    expect(server.reads).toEqual(expect.arrayContaining(['docs://public/readme', 'docs://public/faq']));

    const err = await refused(client.getPrompt({ name: 'secret_prompt' }), -32602);
    expect(err.message).toContain('secret_prompt');
    await refused(client.readResource({ uri: 'docs://private/keys' }), -32602);
    await refused(client.readResource({ uri: 'docs://private/salaries' }), -32602);
    // Only the prefix `docs://public/` is allowed, not every URI that merely begins alike.
    await refused(client.readResource({ uri: 'docs://publicity/x' }), -32602);
    await refused(client.subscribeResource({ uri: 'docs://private/keys' }), -32602);
    await refused(client.unsubscribeResource({ uri: 'docs://private/keys' }), -32602);

    // A project with tools only may neither get a prompt nor read a resource, allowed or not for others.
    const bare = await connect(name, toolsOnly.key);
    await refused(bare.getPrompt({ name: 'summary', arguments: { topic: 'billing' } }), -32602);
    await refused(bare.readResource({ uri: 'docs://public/readme' }), -32602);

    expect(server.prompts).not.toContain('secret_prompt');
    expect(server.reads.filter((uri) => !uri.startsWith('docs://public/'))).toEqual([]);
    expect(seen(server, 'prompts/get').map((p) => p.name)).not.toContain('secret_prompt');
    expect(seen(server, 'resources/read').map((p) => p.uri).filter((uri) => !uri.startsWith('docs://public/'))).toEqual([]);
    expect(seen(server, 'resources/subscribe')).toEqual([]);
    expect(seen(server, 'resources/unsubscribe')).toEqual([]);
    // The tools-only project's get and read reached nothing either: every get and read the server saw was answered.
    expect(seen(server, 'prompts/get').length).toBe(server.prompts.length);
    expect(seen(server, 'resources/read').length).toBe(server.reads.length);
  });

  it.each(SERVERS)('completes the arguments of an allowed prompt or template only (%s)', async (name) => {
    const server = serverNamed(name);
    const client = await connect(name, scoped.key);
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'summary' }, argument: { name: 'topic', value: 'b' } })).completion.values).toEqual(['billing', 'bugs']);
    expect((await client.complete({ ref: { type: 'ref/resource', uri: 'docs://public/{page}' }, argument: { name: 'page', value: 'f' } })).completion.values).toEqual(['faq']);
    expect(server.completions).toEqual(expect.arrayContaining(['prompt:summary', 'resource:docs://public/{page}']));
    const before = seen(server, 'completion/complete').length;
    await refused(client.complete({ ref: { type: 'ref/prompt', name: 'secret_prompt' }, argument: { name: 'x', value: '' } }), -32602);
    await refused(client.complete({ ref: { type: 'ref/resource', uri: 'docs://private/{file}' }, argument: { name: 'file', value: 's' } }), -32602);
    const bare = await connect(name, toolsOnly.key);
    await refused(bare.complete({ ref: { type: 'ref/prompt', name: 'summary' }, argument: { name: 'topic', value: 'b' } }), -32602);
    expect(seen(server, 'completion/complete').length).toBe(before);
    expect(server.completions).not.toContain('resource:docs://private/{file}');
  });

  it.each(SERVERS)('answers a method it does not know with -32601 and forwards nothing; its plumbing passes (%s)', async (name) => {
    const server = serverNamed(name);
    const raw = await rawSession(`/mcp/${name}`, scoped.key);
    const pings = seen(server, 'ping').length;
    const ping = await raw.post({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(ping.status).toBe(200);
    expect(await messagesOf(ping)).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(seen(server, 'ping').length).toBe(pings + 1);
    const level = await raw.post({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } });
    expect(level.status).toBe(200);
    expect(seen(server, 'logging/setLevel').length).toBeGreaterThan(0);

    const before = server.messages.length;
    for (const [id, method] of [
      [3, 'admin/shutdown'],
      ['s-4', 'sampling/anything'],
      [5, 'tools/delete'],
    ] as const) {
      const res = await raw.post({ jsonrpc: '2.0', id, method, params: {} });
      expect(res.status).toBe(200);
      const [answer] = await messagesOf(res);
      expect(answer).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601, data: { code: 'MCP_NOT_ALLOWED' } } });
      expect(answer.error.message.startsWith('MCP_NOT_ALLOWED:')).toBe(true);
      expect(answer.error.message).toContain(method);
    }
    // A refused prompt or resource answered alike, -32602, HTTP 200.
    const read = await raw.post({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'docs://private/keys' } });
    expect(read.status).toBe(200);
    const [answer] = await messagesOf(read);
    expect(answer).toMatchObject({ id: 6, error: { code: -32602, data: { code: 'MCP_NOT_ALLOWED' } } });
    expect(answer.error.message.startsWith('MCP_NOT_ALLOWED:')).toBe(true);
    expect(server.messages.length).toBe(before);
  });

  it.each(SERVERS)('refuses a notification outside the specification with 403 and keeps it from the server (%s)', async (name) => {
    const server = serverNamed(name);
    const raw = await rawSession(`/mcp/${name}`, scoped.key);
    const before = server.messages.length;
    for (const method of ['notifications/admin_reset', 'notifications/resources/updated', 'sampling/notify']) {
      const res = await raw.post({ jsonrpc: '2.0', method, params: {} });
      expect(res.status).toBe(403);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'MCP_NOT_ALLOWED' } } });
      expect(body.error.message).toContain(method);
    }
    expect(server.messages.length).toBe(before);
    // The specification's client notifications pass.
    const listChanged = await raw.post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(listChanged.status).toBe(202);
    const cancelled = await raw.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999, reason: 'test' } });
    expect(cancelled.status).toBe(202);
    expect(server.messages.slice(before).map((m) => ('method' in m ? m.method : null))).toEqual(['notifications/roots/list_changed', 'notifications/cancelled']);
  });

  it.each(SERVERS)("filters a batch's list answers by id, as it filters them alone (%s)", async (name) => {
    const server = serverNamed(name);
    const raw = await rawSession(`/mcp/${name}`, scoped.key);
    const lists = seen(server, 'tools/list').length;
    const res = await raw.post([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'p', method: 'prompts/list' },
      { jsonrpc: '2.0', id: 3, method: 'resources/list' },
      { jsonrpc: '2.0', id: 4, method: 'resources/templates/list' },
      { jsonrpc: '2.0', id: 5, method: 'ping' },
    ]);
    expect(res.status).toBe(200);
    const answers = new Map((await messagesOf(res)).map((m) => [m.id, m]));
    expect([...answers.keys()].sort()).toEqual([1, 3, 4, 5, 'p'].sort());
    // The server answered the whole batch (it was handed every message)…
    expect(seen(server, 'tools/list').length).toBe(lists + 1);
    // …and the client got only what the project may use: echo of the server's five tools, and so on.
    expect(answers.get(1).result.tools.map((t: any) => t.name)).toEqual(['echo']);
    expect(answers.get('p').result.prompts.map((p: any) => p.name)).toEqual(['summary']);
    expect(answers.get(3).result.resources.map((r: any) => r.uri).sort()).toEqual(['docs://public/intro', 'docs://public/readme']);
    expect(answers.get(4).result.resourceTemplates.map((t: any) => t.uriTemplate)).toEqual(['docs://public/{page}']);
    expect(answers.get(5).result).toEqual({});
    // The same batch for a project allowed everything: the server's answers as they are.
    const all = await rawSession(`/mcp/${name}`, everything.key);
    const whole = await all.post([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'prompts/list' },
    ]);
    const wholeAnswers = new Map((await messagesOf(whole)).map((m) => [m.id, m]));
    expect(wholeAnswers.get(1).result.tools.map((t: any) => t.name).sort()).toEqual(['admin_reset', 'echo', 'failing', 'slow', 'wait']);
    expect(wholeAnswers.get(2).result.prompts.map((p: any) => p.name).sort()).toEqual(ALL_PROMPTS);
  });

  it.each(SERVERS)('refuses a whole batch holding one refused message, and none of it reaches the server (%s)', async (name) => {
    const server = serverNamed(name);
    const raw = await rawSession(`/mcp/${name}`, scoped.key);
    const before = server.messages.length;
    const batches: [string, unknown[]][] = [
      ['secret_prompt', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'secret_prompt' } }]],
      ['docs://private/keys', [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'docs://private/keys' } }]],
      ['admin/shutdown', [{ jsonrpc: '2.0', id: 1, method: 'admin/shutdown' }, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'docs://public/readme' } }]],
      ['notifications/admin_reset', [{ jsonrpc: '2.0', method: 'notifications/admin_reset' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]],
    ];
    for (const [named, batch] of batches) {
      const res = await raw.post(batch);
      expect(res.status, named).toBe(403);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'MCP_NOT_ALLOWED' } } });
      expect(body.error.message).toContain(named);
      expect(body.error.message).toContain('nothing of it was sent');
    }
    // A tool call in a batch stays an invalid request (400), whatever else the batch holds.
    const call = await raw.post([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    expect(call.status).toBe(400);
    expect(((await call.json()) as any).error.data.code).toBe('INVALID_REQUEST');
    expect(server.messages.length).toBe(before);
    expect(server.prompts).not.toContain('secret_prompt');
    expect(server.reads).not.toContain('docs://private/keys');
  });

  it.each(SERVERS)('refuses a batch whose requests share an id, so no answer takes another one\'s filter (%s)', async (name) => {
    const server = serverNamed(name);
    const raw = await rawSession(`/mcp/${name}`, scoped.key);
    const before = server.messages.length;
    for (const batch of [
      [{ jsonrpc: '2.0', id: 1, method: 'prompts/list' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
      [{ jsonrpc: '2.0', id: 'a', method: 'tools/list' }, { jsonrpc: '2.0', id: 'a', method: 'prompts/list' }],
    ]) {
      const res = await raw.post(batch);
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.data.code).toBe('INVALID_REQUEST');
      expect(body.error.message).toContain('twice');
    }
    expect(server.messages.length).toBe(before);
  });

  it.each(SERVERS)('matches a resource prefix against the URI the server resolves: dot segments do not climb out of it (%s)', async (name) => {
    const server = serverNamed(name);
    const faq = await newProject(`mcpmsg-faq-${name}`, { servers: { [name]: { tools: [], resources: ['docs://public/faq/*', 'docs://public/readme'] } } });
    const client = await connect(name, faq.key);
    for (const uri of ['docs://public/faq/../readme', 'docs://public/faq/%2e%2e/readme', 'docs://public/faq/../../private/keys', 'docs://public/faq/%2E%2E/%2e%2e/private/keys']) {
      await refused(client.readResource({ uri }), -32602);
    }
    // The exact entry as listed, and a URI under the prefix, still read.
    expect((await client.readResource({ uri: 'docs://public/readme' })).contents[0]).toMatchObject({ text: 'public readme' });
    expect(server.reads.filter((uri) => uri.includes('private'))).toEqual([]);
  });

  it('refuses notifications outside the specification on /mcp too, after initialize, reaching no server', async () => {
    const raw = await rawSession('/mcp', scoped.key);
    const before = docs.messages.length + tickets.messages.length;
    const res = await raw.post({ jsonrpc: '2.0', method: 'notifications/admin_reset', params: {} }, uniqueId('aggregate'));
    expect(res.status).toBe(403);
    expect((await res.json()) as any).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'MCP_NOT_ALLOWED' } } });
    expect(docs.messages.length + tickets.messages.length).toBe(before);
    // One the specification defines goes to every server of the session.
    const passed = await raw.post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(passed.status).toBe(202);
    expect(seen(docs, 'notifications/roots/list_changed').length).toBeGreaterThan(0);
    expect(docs.messages.at(-1)).toMatchObject({ method: 'notifications/roots/list_changed' });
    expect(tickets.messages.at(-1)).toMatchObject({ method: 'notifications/roots/list_changed' });
  });

  it('records each refusal as one audit event with outcome policy_blocked, none of them reaching a server', async () => {
    const docsRaw = await rawSession('/mcp/docs', scoped.key);
    const ticketsRaw = await rawSession('/mcp/tickets', scoped.key);
    const aggregate = await rawSession('/mcp', scoped.key);
    const cases: { raw: Raw; server: string; method: string; status: number; body: unknown }[] = [
      { raw: docsRaw, server: 'docs', method: 'prompts/get', status: 200, body: { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'secret_prompt' } } },
      { raw: ticketsRaw, server: 'tickets', method: 'resources/read', status: 200, body: { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'docs://private/keys' } } },
      { raw: docsRaw, server: 'docs', method: 'resources/subscribe', status: 200, body: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'docs://private/keys' } } },
      { raw: docsRaw, server: 'docs', method: 'completion/complete', status: 200, body: { jsonrpc: '2.0', id: 1, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'secret_prompt' }, argument: { name: 'x', value: '' } } } },
      { raw: ticketsRaw, server: 'tickets', method: 'admin/shutdown', status: 200, body: { jsonrpc: '2.0', id: 1, method: 'admin/shutdown' } },
      { raw: docsRaw, server: 'docs', method: 'notifications/admin_reset', status: 403, body: { jsonrpc: '2.0', method: 'notifications/admin_reset' } },
      { raw: docsRaw, server: 'docs', method: 'batch', status: 403, body: [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'secret_prompt' } }] },
      { raw: aggregate, server: '*', method: 'notifications/admin_reset', status: 403, body: { jsonrpc: '2.0', method: 'notifications/admin_reset' } },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const id = uniqueId(c.method.replace(/\W/g, '-'));
      ids.push(id);
      const res = await c.raw.post(c.body, id);
      expect(res.status, c.method).toBe(c.status);
      await res.text();
    }
    const events = await auditOf(scoped.id, (e) => ids.includes(e.request_id), ids.length);
    for (const [i, c] of cases.entries()) {
      const own = events.filter((e) => e.request_id === ids[i]);
      expect(own, c.method).toHaveLength(1);
      expect(own[0], c.method).toMatchObject({
        type: 'gateway.request',
        endpoint: 'mcp',
        outcome: 'policy_blocked',
        status: c.status,
        error_code: 'MCP_NOT_ALLOWED',
        provider: null,
        attempts: 0,
        mcp: { server: c.server, method: c.method, tool: null },
      });
    }
  });
});
