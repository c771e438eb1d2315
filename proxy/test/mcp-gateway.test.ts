import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness as startControlPlane, type Harness as ControlPlaneHarness } from '../../control-plane/test/harness.js';
import { startWriter, type Writer } from '../../control-plane/src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually } from '../../test-support/processes.js';
import { inOneRateWindow } from '../../test-support/rate-window.js';
import { freePort } from '../../test-support/services.js';
import { startProxy, type Proxy } from '../src/proxy.js';
import { startStatefulMcpServer, startStatelessMcpServer, type TestMcpServer } from './mcp-servers.js';

/**
 * The MCP gateway end to end: real MCP servers (the official SDK, one stateful with SSE answers,
 * one stateless with JSON answers) behind two proxy replicas, the official MCP client pointed at
 * the gateway, the project's `mcp` setting made through the management API, and the records read
 * back from PostgreSQL through the writer.
 */
const DOCS_TOKEN = 'docs-server-credential-0123456789';
let docs: TestMcpServer;
let tickets: TestMcpServer;
let cp: ControlPlaneHarness;
let writer: Writer;
const replicas: Proxy[] = [];
let project: { id: string; key: string; keyId: string };
let bare: { id: string; key: string };
const clients: Client[] = [];

const gateway = (i: number, path: string) => new URL(`http://127.0.0.1:${replicas[i]!.port}${path}`);

beforeAll(async () => {
  [docs, tickets] = await Promise.all([startStatefulMcpServer(), startStatelessMcpServer()]);
  cp = await startControlPlane('mcp');
  const dir = mkdtempSync(join(tmpdir(), 'gw-mcp-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(
    providers,
    `providers:
  - { name: mock, type: mock, models: [mock-1] }
mcp_servers:
  - name: docs
    url: ${docs.url}
    headers: { Authorization: "Bearer \${DOCS_TOKEN}" }
    price_per_call: 0.01
  - { name: tickets, url: "${tickets.url}", headers: { X-Tickets-Team: search } }
`,
  );
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  for (let i = 0; i < 2; i++) {
    replicas.push(await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers, DOCS_TOKEN, DRAIN_TIMEOUT_MS: '1000' }));
  }
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
  project = await newProject('mcp', { servers: { docs: { tools: ['echo', 'slow', 'wait', 'failing'] }, tickets: { tools: '*' } } });
  bare = await newProject('no-mcp', undefined);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  for (const r of replicas) await r.drain();
  await writer?.close();
  await cp?.close();
  await docs?.close();
  await tickets?.close();
});

async function newProject(name: string, mcp: unknown): Promise<{ id: string; key: string; keyId: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name } });
  expect(created.status).toBe(201);
  if (mcp !== undefined) {
    const patched = await cp.api('PATCH', `/v1/projects/${created.body.id}`, { token: cp.adminToken, body: { mcp } });
    expect(patched.status).toBe(200);
    expect(patched.body.mcp).toEqual(mcp);
  }
  return { id: created.body.id, ...(await newKey(created.body.id)) };
}

async function newKey(projectId: string): Promise<{ key: string; keyId: string }> {
  const key = await cp.api('POST', `/v1/projects/${projectId}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  expect(key.status).toBe(201);
  return { key: key.body.key, keyId: key.body.id };
}

/** The official client, through replica `i`, with the key as x-api-key (or Bearer). */
async function connect(i: number, path: string, key: string, options: { bearer?: boolean; sessionId?: string } = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const headers: Record<string, string> = options.bearer ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  const transport = new StreamableHTTPClientTransport(gateway(i, path), { requestInit: { headers }, sessionId: options.sessionId });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

function text(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0] as { text: string }).text;
}

async function auditOf(requestFilter: (e: any) => boolean, count = 1): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await cp.api('GET', `/v1/audit?project_id=${project.id}&limit=1000`, { token: cp.adminToken });
    found = (res.body.data as any[]).filter(requestFilter);
    return found.length >= count;
  }, 'audit events written');
  return found;
}

describe('MCP gateway', () => {
  it('lists only the allowed tools and calls one, with the server seeing its own credentials and never the client key', async () => {
    const before = docs.requests.length;
    const { client } = await connect(0, '/mcp/docs', project.key);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name).sort()).toEqual(['echo', 'failing', 'slow', 'wait']);
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('hello');
    const seen = docs.requests.slice(before);
    expect(seen.length).toBeGreaterThan(2);
    for (const { headers } of seen) {
      expect(headers.authorization).toBe(`Bearer ${DOCS_TOKEN}`);
      expect(headers['x-api-key']).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain(project.key);
    }
    // The session and protocol version travelled both ways.
    expect(seen.at(-1)!.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.at(-1)!.headers['mcp-protocol-version']).toBeTruthy();
  });

  it('answers a call of a tool not allowed with a JSON-RPC error, and the server never sees it', async () => {
    const { client } = await connect(1, '/mcp/docs', project.key, { bearer: true });
    await expect(client.callTool({ name: 'admin_reset', arguments: {} })).rejects.toThrow(/TOOL_NOT_ALLOWED/);
    expect(docs.calls).not.toContain('admin_reset');
    const [event] = await auditOf((e) => e.mcp?.tool === 'admin_reset');
    expect(event).toMatchObject({ endpoint: 'mcp', outcome: 'policy_blocked', error_code: 'TOOL_NOT_ALLOWED', mcp: { server: 'docs', tool: 'admin_reset', method: 'tools/call' } });
  });

  it('relays progress notifications of a long call as they come', async () => {
    const { client } = await connect(0, '/mcp/docs', project.key);
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow', arguments: { steps: 4 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(text(result)).toBe('done after 4');
    expect(progress).toEqual([1, 2, 3, 4]);
  });

  it('serves a stateless server answering in JSON', async () => {
    const { client } = await connect(1, '/mcp/tickets', project.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('admin_reset');
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'ticket' } }))).toBe('ticket');
    const last = tickets.requests.at(-1)!.headers;
    expect(last['x-tickets-team']).toBe('search');
    expect(JSON.stringify(last)).not.toContain(project.key);
  });

  it('serves every allowed server on /mcp, tools named <server>__<tool>', async () => {
    const { client } = await connect(0, '/mcp', project.key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['docs__echo', 'docs__slow', 'tickets__echo', 'tickets__admin_reset']));
    expect(names).not.toContain('docs__admin_reset');
    expect(text(await client.callTool({ name: 'docs__echo', arguments: { text: 'via docs' } }))).toBe('via docs');
    expect(text(await client.callTool({ name: 'tickets__echo', arguments: { text: 'via tickets' } }))).toBe('via tickets');
    const calls = docs.calls.length;
    await expect(client.callTool({ name: 'docs__admin_reset', arguments: {} })).rejects.toThrow(/TOOL_NOT_ALLOWED/);
    await expect(client.callTool({ name: 'nowhere__echo', arguments: {} })).rejects.toThrow(/TOOL_NOT_ALLOWED/);
    expect(docs.calls.length).toBe(calls);
    const progress: number[] = [];
    await client.callTool({ name: 'docs__slow', arguments: { steps: 2 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(progress).toEqual([1, 2]);
  });

  it('lets either replica serve any call of a session, on /mcp and on /mcp/{server}', async () => {
    for (const path of ['/mcp', '/mcp/docs']) {
      const first = await connect(0, path, project.key);
      const sessionId = first.transport.sessionId;
      expect(sessionId).toBeTruthy();
      const other = await connect(1, path, project.key, { sessionId });
      const tool = path === '/mcp' ? 'docs__echo' : 'echo';
      expect(text(await other.client.callTool({ name: tool, arguments: { text: 'replica 1' } }))).toBe('replica 1');
      expect(text(await first.client.callTool({ name: tool, arguments: { text: 'replica 0' } }))).toBe('replica 0');
    }
    // A session id is worth nothing to another project's key.
    const first = await connect(0, '/mcp', project.key);
    const other = await newProject('other-mcp', { servers: { docs: { tools: '*' } } });
    const stolen = new StreamableHTTPClientTransport(gateway(1, '/mcp'), { requestInit: { headers: { 'x-api-key': other.key } }, sessionId: first.transport.sessionId });
    const thief = new Client({ name: 'thief', version: '1' });
    await thief.connect(stolen);
    clients.push(thief);
    await expect(thief.listTools()).rejects.toThrow(/404|session/i);
  });

  it('signs the /mcp session id: altered, unsigned or presented by another key of the project, it is unknown', async () => {
    const post = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(gateway(0, '/mcp'), {
      method: 'POST',
      headers: { ...post, 'x-api-key': project.key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const id = init.headers.get('mcp-session-id')!;
    const list = (sessionId: string, key = project.key, i = 1) =>
      fetch(gateway(i, '/mcp'), { method: 'POST', headers: { ...post, 'x-api-key': key, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect((await list(id)).status).toBe(200);
    // The session with a server added that the client names itself: its signature no longer fits.
    const [prefix, payload, signature] = [id.slice(0, 4), id.slice(4, id.lastIndexOf('.')), id.slice(id.lastIndexOf('.') + 1)];
    const session = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { s: Record<string, [string, string]> };
    session.s.admin = ['x', '2025-06-18'];
    const added = `${prefix}${Buffer.from(JSON.stringify(session)).toString('base64url')}.${signature}`;
    expect((await list(added)).status).toBe(404);
    // The same session unsigned, as ids were before they were signed.
    expect((await list(`gw1.${payload}`)).status).toBe(404);
    // Another key of the same project: the id is bound to the key that began the session.
    const second = await newKey(project.id);
    expect((await list(id, second.key)).status).toBe(404);
    // A notification with an altered id reaches no server.
    const seenBefore = docs.requests.length;
    const note = await fetch(gateway(0, '/mcp'), { method: 'POST', headers: { ...post, 'x-api-key': project.key, 'mcp-session-id': added }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
    expect(note.status).toBe(404);
    expect(docs.requests.length).toBe(seenBefore);
  });

  it('refuses a project without an mcp setting with 403 and forwards nothing, initialize included', async () => {
    const before = docs.requests.length + tickets.requests.length;
    for (const path of ['/mcp', '/mcp/docs']) {
      const transport = new StreamableHTTPClientTransport(gateway(0, path), { requestInit: { headers: { 'x-api-key': bare.key } } });
      await expect(new Client({ name: 'bare', version: '1' }).connect(transport)).rejects.toThrow(/403|MCP_NOT_ALLOWED/);
    }
    const raw = await fetch(gateway(1, '/mcp/docs'), {
      method: 'POST',
      headers: { 'x-api-key': bare.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }),
    });
    expect(raw.status).toBe(403);
    expect(((await raw.json()) as any).error.data.code).toBe('MCP_NOT_ALLOWED');
    expect(docs.requests.length + tickets.requests.length).toBe(before);
    const noKey = await fetch(gateway(0, '/mcp'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(noKey.status).toBe(401);
  });

  it('records one audit event per request and one usage record per tool call that reached its server', async () => {
    const { client } = await connect(0, '/mcp/docs', project.key);
    const result = await client.callTool({ name: 'failing', arguments: {} });
    expect(result.isError).toBe(true);
    const [call] = await auditOf((e) => e.mcp?.tool === 'failing');
    expect(call).toMatchObject({ type: 'gateway.request', endpoint: 'mcp', outcome: 'error', status: 200, key_id: project.keyId, provider: 'docs', mcp: { server: 'docs', tool: 'failing', method: 'tools/call' } });
    await auditOf((e) => e.mcp?.method === 'initialize');
    let usage: any[] = [];
    await eventually(async () => {
      const res = await cp.api('GET', `/v1/usage?project_id=${project.id}&limit=1000`, { token: cp.adminToken });
      usage = res.body.data;
      return usage.some((u) => u.id === call.id);
    }, 'usage written');
    expect(usage.find((u) => u.id === call.id)).toMatchObject({ endpoint: 'mcp', model: 'failing', provider: 'docs', cost_usd: 0.01, finish_reason: 'error', tokens: { input: 0, output: 0, total: 0 } });
    // Only tool calls that reached a server are charged: no usage for list, initialize or refusals.
    const audit = (await cp.api('GET', `/v1/audit?project_id=${project.id}&limit=1000`, { token: cp.adminToken })).body.data as any[];
    const reachedCalls = audit.filter((e) => e.mcp?.method === 'tools/call' && e.provider !== null).map((e) => e.id);
    await eventually(async () => {
      const res = await cp.api('GET', `/v1/usage?project_id=${project.id}&limit=1000`, { token: cp.adminToken });
      usage = res.body.data;
      return reachedCalls.every((id) => usage.some((u) => u.id === id));
    }, 'every call charged');
    expect(usage.every((u) => reachedCalls.includes(u.id))).toBe(true);
    expect(JSON.stringify(audit)).not.toContain(project.key);
  });

  it("reserves a priced tool's calls in the project's budget and stops at its limit; a project past its quota makes no call", async () => {
    // docs costs $0.01 a call: a $0.025 budget holds two calls, on either replica.
    const budgeted = await newProject('mcp-budget', { servers: { docs: { tools: '*' } } });
    const made = await cp.api('POST', `/v1/projects/${budgeted.id}/budgets`, { token: cp.adminToken, body: { scope: 'project', limit_usd: 0.025, period: 'total' } });
    expect(made.status, made.text).toBe(201);
    const first = await connect(0, '/mcp/docs', budgeted.key);
    const second = await connect(1, '/mcp/docs', budgeted.key);
    expect(text(await first.client.callTool({ name: 'echo', arguments: { text: 'one' } }))).toBe('one');
    expect(text(await second.client.callTool({ name: 'echo', arguments: { text: 'two' } }))).toBe('two');
    const calls = docs.calls.length;
    await expect(first.client.callTool({ name: 'echo', arguments: { text: 'three' } })).rejects.toThrow(/BUDGET_EXCEEDED/);
    await expect(second.client.callTool({ name: 'echo', arguments: { text: 'three' } })).rejects.toThrow(/BUDGET_EXCEEDED/);
    expect(docs.calls.length).toBe(calls);
    // What the budget says it spent is what the two calls cost.
    await eventually(async () => {
      const res = await cp.api('GET', `/v1/projects/${budgeted.id}/budgets/${made.body.id}`, { token: cp.adminToken });
      return Math.abs(res.body.spent_usd - 0.02) < 1e-9;
    }, 'the two calls charged');

    // A project with no token left of its quota: tool calls stop too, before its server sees them.
    const quoted = await newProject('mcp-quota', { servers: { tickets: { tools: '*' } } });
    const tickets = await connect(0, '/mcp/tickets', quoted.key);
    expect(text(await tickets.client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    expect((await cp.api('PATCH', `/v1/projects/${quoted.id}`, { token: cp.adminToken, body: { quota_tokens: 0 } })).status).toBe(200);
    await eventually(async () => {
      const refused = await tickets.client.callTool({ name: 'echo', arguments: { text: 'after' } }).then(() => null, (err: Error) => err.message);
      return refused !== null && /QUOTA_EXCEEDED/.test(refused);
    }, 'tool calls refused once the quota is spent');
  });

  it('cuts a call in flight when its key is deleted: a JSON-RPC error naming UNAUTHORIZED, the server request cancelled, then 401', async () => {
    const { key, keyId } = await newKey(project.id);
    for (const [i, path, tool] of [[0, '/mcp/docs', 'wait'], [1, '/mcp', 'docs__wait']] as const) {
      const extra = i === 0 ? { key, keyId } : await newKey(project.id);
      const { client } = await connect(i, path, extra.key);
      const started = docs.waiting;
      const cancelled = docs.cancelled;
      const call = client.callTool({ name: tool, arguments: {} });
      const outcome = call.then(() => 'answered', (err: Error) => err.message);
      await eventually(async () => docs.waiting > started, 'the tool started');
      expect((await cp.api('DELETE', `/v1/projects/${project.id}/keys/${extra.keyId}`, { token: cp.adminToken })).status).toBe(204);
      expect(await outcome).toMatch(/UNAUTHORIZED/);
      await eventually(async () => docs.cancelled > cancelled, "the server's request cancelled");
      await expect(client.callTool({ name: tool, arguments: {} })).rejects.toThrow(/UNAUTHORIZED/);
      const again = await fetch(gateway(1 - i, path), { method: 'POST', headers: { 'x-api-key': extra.key, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":9,"method":"ping"}' });
      expect(again.status).toBe(401);
    }
    const [cut] = await auditOf((e) => e.key_id === keyId && e.mcp?.tool === 'wait');
    expect(cut).toMatchObject({ outcome: 'auth_failed', error_code: 'UNAUTHORIZED', mcp: { server: 'docs', tool: 'wait' } });
  });

  it('counts tool calls against the rate limits, and only tool calls', async () => {
    const limited = await newProject('mcp-limited', { servers: { docs: { tools: '*' } } });
    const patched = await cp.api('PATCH', `/v1/projects/${limited.id}`, { token: cp.adminToken, body: { rate_limits: { key_rpm: 2 } } });
    expect(patched.status).toBe(200);
    const { client } = await connect(0, '/mcp/docs', limited.key);
    await eventually(async () => (await client.listTools()).tools.length > 0, 'listed');
    await client.listTools();
    const calls = docs.calls.length;
    await inOneRateWindow();
    await client.callTool({ name: 'echo', arguments: { text: '1' } });
    await client.callTool({ name: 'echo', arguments: { text: '2' } });
    await expect(client.callTool({ name: 'echo', arguments: { text: '3' } })).rejects.toThrow(/429|RATE_LIMITED/);
    expect(docs.calls.length).toBe(calls + 2);
    // Lists are not tool calls: still served.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('passes the server-initiated stream (GET) and the session end (DELETE) through', async () => {
    // A session opened by hand: the official client opens its own GET stream, and a server allows one.
    const post = { 'x-api-key': project.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(gateway(1, '/mcp/docs'), {
      method: 'POST',
      headers: post,
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const transport = { sessionId: init.headers.get('mcp-session-id') };
    expect(transport.sessionId).toBeTruthy();
    const headers = { 'x-api-key': project.key, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' };
    expect((await fetch(gateway(0, '/mcp/docs'), { method: 'POST', headers: { ...post, ...headers }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).status).toBe(202);
    const controller = new AbortController();
    const stream = await fetch(gateway(0, '/mcp/docs'), { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    controller.abort();
    const gets = docs.requests.filter((r) => r.method === 'GET' && r.headers['mcp-session-id'] === transport.sessionId);
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.every((r) => r.headers['x-api-key'] === undefined && r.headers.authorization === `Bearer ${DOCS_TOKEN}`)).toBe(true);
    const ended = await fetch(gateway(0, '/mcp/docs'), { method: 'DELETE', headers });
    expect(ended.status).toBe(200);
    const after = await fetch(gateway(1, '/mcp/docs'), { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(after.status).toBe(404);
  });

  it('follows a change of the setting on every replica', async () => {
    const narrowed = await cp.api('PATCH', `/v1/projects/${project.id}`, { token: cp.adminToken, body: { mcp: { servers: { docs: { tools: ['slow'] } } } } });
    expect(narrowed.status).toBe(200);
    for (const i of [0, 1]) {
      const { client } = await connect(i, '/mcp/docs', project.key);
      await eventually(async () => (await client.listTools()).tools.map((t) => t.name).join() === 'slow', `replica ${i} follows the change`);
      await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/TOOL_NOT_ALLOWED/);
    }
    expect((await cp.api('PATCH', `/v1/projects/${project.id}`, { token: cp.adminToken, body: { mcp: null } })).body.mcp).toBeNull();
    await eventually(async () => (await fetch(gateway(1, '/mcp'), { method: 'POST', headers: { 'x-api-key': project.key, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' })).status === 403, 'MCP switched off');
  });
});
