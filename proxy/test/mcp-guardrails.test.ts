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
 * Guardrails over MCP tool calls, where a project asks for it (an input guard with `mcp: true`):
 * the arguments of a tools/call are read on /mcp/{server} and /mcp; a block answers the call and
 * the server never sees it, a mask reaches the server masked; guards without `mcp` leave tool calls
 * alone. The official MCP SDK on both sides, the records read back from PostgreSQL.
 */
let docs: TestMcpServer;
let tickets: TestMcpServer;
let cp: ControlPlaneHarness;
let writer: Writer;
let proxy: Proxy;
const clients: Client[] = [];
const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

beforeAll(async () => {
  [docs, tickets] = await Promise.all([startStatefulMcpServer(), startStatelessMcpServer()]);
  cp = await startControlPlane('mcpguard');
  const dir = mkdtempSync(join(tmpdir(), 'gw-mcpguard-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: mock, type: mock, models: [mock-1] }\nmcp_servers:\n  - { name: docs, url: "${docs.url}" }\n  - { name: tickets, url: "${tickets.url}" }\n`);
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: cp.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...env, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', GATEWAY_CONFIG: providers });
  writer = await startWriter({ ...env, DATABASE_URL: cp.db.url, WRITER_PORT: String(await freePort()), RECORD_FLUSH_MS: '50' });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await proxy?.drain();
  await writer?.close();
  await cp?.close();
  await docs?.close();
  await tickets?.close();
});

let projects = 0;
async function project(guardrails: unknown[]): Promise<{ id: string; key: string }> {
  const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: `mcpguard ${++projects}`, mcp: { servers: { docs: { tools: '*' }, tickets: { tools: '*' } } } } });
  expect(created.status, created.text).toBe(201);
  const put = await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: guardrails });
  expect(put.status, put.text).toBe(200);
  const key = await cp.api('POST', `/v1/projects/${created.body.id}/keys`, { token: cp.adminToken, body: { name: 'k' } });
  return { id: created.body.id, key: key.body.key };
}

async function connect(path: string, key: string): Promise<Client> {
  const client = new Client({ name: 'mcpguard-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.port}${path}`), { requestInit: { headers: { 'x-api-key': key } } }));
  clients.push(client);
  return client;
}

/** The echo calls a server was handed, with the text it was sent. */
function echoed(server: TestMcpServer): string[] {
  return server.messages
    .filter((m: JSONRPCMessage) => 'method' in m && m.method === 'tools/call')
    .map((m) => (m as unknown as { params: { arguments: { text: string } } }).params.arguments.text);
}

async function audit(projectId: string, count: number): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await cp.api('GET', `/v1/audit?project_id=${projectId}&limit=100`, { token: cp.adminToken });
    found = (res.body.data as any[]).filter((e) => e.mcp?.method === 'tools/call');
    return found.length >= count;
  }, 'the tool calls audited');
  return found;
}

describe('guardrails on MCP tool arguments', () => {
  it('blocks a call whose arguments carry a secret, on one server and on /mcp; the server never sees it', async () => {
    const p = await project([{ id: 'secrets', stage: 'input', type: 'pii', action: 'block', entities: ['secret'], mcp: true }]);
    for (const [path, server, tool] of [['/mcp/docs', docs, 'echo'], ['/mcp', tickets, 'tickets__echo']] as const) {
      const client = await connect(path, p.key);
      const err = await client.callTool({ name: tool, arguments: { text: `the key is ${secret}` } }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).message).toContain('GUARDRAIL_BLOCKED');
      expect(echoed(server).some((t) => t.includes('sk-proj'))).toBe(false);
      // A clean call passes.
      expect(await client.callTool({ name: tool, arguments: { text: 'nothing secret' } })).toMatchObject({ content: [{ type: 'text', text: 'nothing secret' }] });
    }
    const events = await audit(p.id, 4);
    const blocked = events.filter((e) => e.outcome === 'policy_blocked');
    expect(blocked).toHaveLength(2);
    for (const e of blocked) expect(e).toMatchObject({ error_code: 'GUARDRAIL_BLOCKED', guardrails: [{ id: 'secrets', stage: 'input', action: 'block' }], attempts: 0 });
  });

  it('masks the arguments the server receives', async () => {
    const p = await project([{ id: 'emails', stage: 'both', type: 'pii', action: 'mask', entities: ['email'], mcp: true }]);
    const client = await connect('/mcp/tickets', p.key);
    const answer = await client.callTool({ name: 'echo', arguments: { text: 'write to ada@example.com today' } });
    expect(JSON.stringify(answer)).not.toContain('ada@example.com');
    expect(echoed(tickets).some((t) => t.includes('ada@example.com'))).toBe(false);
    expect(echoed(tickets).some((t) => /write to <EMAIL_\d+> today/.test(t))).toBe(true);
    const [event] = await audit(p.id, 1);
    expect(event).toMatchObject({ outcome: 'success', guardrails: [{ id: 'emails', stage: 'input', action: 'mask' }] });
  });

  it('leaves tool calls alone when no guard asks for MCP', async () => {
    const p = await project([{ id: 'secrets', stage: 'input', type: 'pii', action: 'block', entities: ['secret'] }]);
    const client = await connect('/mcp/docs', p.key);
    const text = `model prompts only: ${secret}`;
    expect(await client.callTool({ name: 'echo', arguments: { text } })).toMatchObject({ content: [{ type: 'text', text }] });
    expect(echoed(docs)).toContain(text);
  });

  it('refuses mcp on a guard that reads only answers', async () => {
    const created = await cp.api('POST', '/v1/projects', { token: cp.adminToken, body: { name: 'mcpguard bad' } });
    const put = await cp.api('PUT', `/v1/projects/${created.body.id}/guardrails`, { token: cp.adminToken, body: [{ id: 'out', stage: 'output', type: 'pii', action: 'block', entities: ['secret'], mcp: true }] });
    expect(put.status).toBe(400);
    expect(put.text).toContain('mcp applies to input guards');
  });
});
