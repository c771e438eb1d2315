import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Client } from 'undici';
import { userAgent } from '../harness/context.js';
import { keepAliveClient } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { cpuSeconds } from '../harness/processes.js';
import { progress } from '../harness/progress.js';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { startBare, startGateway } from '../harness/stack.js';
import { median, medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Added latency of an MCP tools/call through the gateway (`/mcp/{server}`: key, policy, tool
 * allow-list, rate limits, records) over calling the MCP server directly, at concurrency 1, in
 * one session of a real MCP server (the official SDK, JSON answers), alternating the paths. The
 * bare pass-through (one more loopback hop and nothing else) shows what any proxy in between costs
 * on the machine, so the gateway's own share is gateway − bare. Latency at concurrency 1 moves with
 * whatever else runs on the machine; the CPU time the bare hop's and the gateway's processes spend
 * per call barely does, so it is reported beside it (the steadier figure of the gateway's own work).
 */
export const TARGET_ADDED_MEAN_US = 100;
const SERVER = 'tools';
const PROTOCOL = '2025-06-18';

interface McpTarget {
  name: 'direct' | 'bare' | 'gateway';
  origin: string;
  path: string;
  headers: Record<string, string>;
}

async function startToolServer(): Promise<{ url: string; close(): Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (existing !== undefined) return void existing.handleRequest(req, res);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => void transports.set(id, transport) });
    const server = new McpServer({ name: 'bench-tools', version: '1.0.0' });
    server.registerTool('ping', { description: 'Answers at once.' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

/** Opens a session at the server itself (initialize, then initialized): both paths use it. */
async function openSession(client: Client, path: string, ua: string): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'user-agent': ua };
  const init = await client.request({
    path,
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  await init.body.arrayBuffer();
  const session = init.headers['mcp-session-id'];
  if (typeof session !== 'string') throw new Error(`the MCP server opened no session (${init.statusCode})`);
  const done = await client.request({ path, method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
  await done.body.arrayBuffer();
  return session;
}

async function timeCalls(client: Client, target: McpTarget, count: number): Promise<{ samplesUs: Float64Array; errors: number }> {
  const samples = new Float64Array(count);
  let errors = 0;
  for (let i = 0; i < count; i++) {
    const body = `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"ping","arguments":{}}}`;
    const t0 = process.hrtime.bigint();
    try {
      const res = await client.request({ path: target.path, method: 'POST', headers: target.headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 200 || !text.includes('pong')) errors++;
    } catch {
      errors++;
    }
    samples[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  return { samplesUs: samples, errors };
}

export const mcp: Scenario = {
  name: 'mcp',
  title: 'Added latency of an MCP tools/call at concurrency 1',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys, { mcp: { servers: { [SERVER]: { tools: ['ping'] } } } });
    const tools = await startToolServer();
    const providersFile = join(ctx.tmpDir, 'providers-mcp.json');
    writeFileSync(providersFile, JSON.stringify({ providers: [{ name: 'mock', type: 'mock', models: ['mock-1'] }], mcp_servers: [{ name: SERVER, url: tools.url }] }));
    const gateway = await startGateway(ctx, '', 'mcp', { providersFile });
    const bare = await startBare(ctx, new URL(tools.url).origin);
    const ua = userAgent('mcp');
    const serverUrl = new URL(tools.url);
    const perRound = sized(ctx, 3_000, 200);
    const warm = sized(ctx, 500, 50);
    const direct = keepAliveClient(serverUrl.origin);
    const through = keepAliveClient(gateway.origin);
    const hop = keepAliveClient(bare.origin);
    const rounds = new Map<string, Summary[]>([['direct', []], ['bare', []], ['gateway', []]]);
    const cpuUs = new Map<string, number[]>([['bare', []], ['gateway', []]]);
    const pids: Record<string, number | undefined> = { bare: bare.child.pid, gateway: gateway.child.pid };
    let errors = 0;
    try {
      const session = await openSession(direct, serverUrl.pathname, ua);
      const common = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL, 'user-agent': ua };
      const targets: McpTarget[] = [
        { name: 'direct', origin: serverUrl.origin, path: serverUrl.pathname, headers: common },
        { name: 'bare', origin: bare.origin, path: serverUrl.pathname, headers: common },
        { name: 'gateway', origin: gateway.origin, path: `/mcp/${SERVER}`, headers: { ...common, 'x-api-key': key.key } },
      ];
      const clients = { direct, bare: hop, gateway: through };
      for (const target of targets) {
        progress(`mcp: warming ${target.name} (${warm} calls)`);
        errors += (await timeCalls(clients[target.name], target, warm)).errors;
      }
      for (const [r, order] of rotations(targets, ctx.options.rounds).entries()) {
        for (const target of order) {
          const pid = pids[target.name];
          const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
          const result = await timeCalls(clients[target.name], target, perRound);
          if (pid !== undefined) cpuUs.get(target.name)?.push(((cpuSeconds(pid) - cpuBefore) * 1e6) / perRound);
          errors += result.errors;
          const s = summarise(result.samplesUs);
          rounds.get(target.name)?.push(s);
          progress(`mcp: round ${r + 1} ${target.name}: mean ${us(s.mean)}, p50 ${us(s.p50)}, p99 ${us(s.p99)}`);
        }
      }
    } finally {
      await direct.close();
      await through.close();
      await hop.close();
      await gateway.stop();
      await bare.stop();
      await tools.close();
    }
    const med = { direct: medianSummary(rounds.get('direct')!), bare: medianSummary(rounds.get('bare')!), gateway: medianSummary(rounds.get('gateway')!) };
    const over = (a: Summary, b: Summary) => ({ mean: a.mean - b.mean, p50: a.p50 - b.p50, p99: a.p99 - b.p99 });
    const added = over(med.gateway, med.direct);
    const hopCost = over(med.bare, med.direct);
    const own = over(med.gateway, med.bare);
    const row = (figure: string, field: 'mean' | 'p50' | 'p99', target?: number): Row => ({
      figure,
      direct: us(med.direct[field]),
      bare: us(med.bare[field]),
      gateway: us(med.gateway[field]),
      result: `gateway ${signedUs(added[field])} over direct (bare pass-through ${signedUs(hopCost[field])}; gateway − bare ${signedUs(own[field])})`,
      ...(target === undefined ? { verdict: 'info' as const } : { target: `≤ +${target} µs over direct`, verdict: atMost(added[field], target) }),
    });
    const cpu = { bare: median(cpuUs.get('bare')!), gateway: median(cpuUs.get('gateway')!) };
    const cpuRow: Row = {
      figure: 'tools/call CPU per call, proxy process (median of rounds)',
      direct: '—',
      bare: us(cpu.bare),
      gateway: us(cpu.gateway),
      result: `gateway − bare ${signedUs(cpu.gateway - cpu.bare)}`,
      verdict: 'info',
    };
    return {
      errors,
      rows: [row(`tools/call c=1 mean, median of ${ctx.options.rounds} × ${perRound}`, 'mean', TARGET_ADDED_MEAN_US), row('tools/call c=1 p50', 'p50'), row('tools/call c=1 p99', 'p99'), cpuRow],
      data: { callsPerRound: perRound, rounds: ctx.options.rounds, unit: 'µs', targets: med, perRound: Object.fromEntries(rounds), addedByGateway: added, addedByBare: hopCost, gatewayOverBare: own, cpuUsPerCall: cpu, cpuUsPerCallPerRound: Object.fromEntries(cpuUs) },
    };
  },
};
