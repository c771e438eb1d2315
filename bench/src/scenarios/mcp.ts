import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'undici';
import { userAgent } from '../harness/context.js';
import { keepAliveClient } from '../harness/http.js';
import { holdIdleStates, type IdleHold } from '../harness/idle-states.js';
import { projectKey } from '../harness/keys.js';
import { cpuSeconds, spawnNode, waitForOutput } from '../harness/processes.js';
import { progress } from '../harness/progress.js';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { startBare, startGateway } from '../harness/stack.js';
import { median, medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Added latency of an MCP tools/call through the gateway (`/mcp/{server}`: key, policy, tool
 * allow-list, rate limits, records) over calling the MCP server directly, at concurrency 1, in
 * one session of a real MCP server (the official SDK, JSON answers, a process of its own),
 * alternating the paths. The bare pass-through (one more loopback hop and nothing else) shows
 * what any proxy in between costs on the machine, so the gateway's own share is gateway − bare.
 *
 * Each round runs twice: with the CPUs held in their polling idle state (harness/idle-states.ts),
 * the condition the target is read in, and in the machine's default. On a virtual machine whose
 * idle CPUs halt, a proxied call pays two more process wake-ups than a direct one, each a
 * hypervisor round trip; both figures are reported, so what the machine adds is in plain view.
 * The CPU time the bare hop's and the gateway's processes spend per call is reported beside them
 * (the steadier figure of the gateway's own work).
 *
 * The target is read on the median call. The mean moves with stalls of the machine of a few
 * milliseconds that hit about one call in a hundred on any path through a second process: in the
 * same rounds, the bare pass-through's mean over direct is often above the gateway's.
 */
export const TARGET_ADDED_P50_US = 100;
const SERVER = 'tools';
const PROTOCOL = '2025-06-18';

type Condition = 'held' | 'default';

interface McpTarget {
  name: 'direct' | 'bare' | 'gateway';
  origin: string;
  path: string;
  headers: Record<string, string>;
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
    const toolServer = spawnNode('MCP server', 'bench/dist/mcp-tool-server-main.js', ['0']);
    const [, toolPort] = await waitForOutput(toolServer, /listening (\d+)/);
    const serverUrl = new URL(`http://127.0.0.1:${toolPort}/mcp`);
    const providersFile = join(ctx.tmpDir, 'providers-mcp.json');
    writeFileSync(providersFile, JSON.stringify({ providers: [{ name: 'mock', type: 'mock', models: ['mock-1'] }], mcp_servers: [{ name: SERVER, url: serverUrl.href }] }));
    const gateway = await startGateway(ctx, '', 'mcp', { providersFile });
    const bare = await startBare(ctx, serverUrl.origin);
    const ua = userAgent('mcp');
    const perRound = sized(ctx, 3_000, 200);
    const warm = sized(ctx, 500, 50);
    const direct = keepAliveClient(serverUrl.origin);
    const through = keepAliveClient(gateway.origin);
    const hop = keepAliveClient(bare.origin);
    const probe = holdIdleStates();
    probe.release();
    const conditions: Condition[] = probe.refused === null ? ['held', 'default'] : ['default'];
    const rounds = new Map<string, Summary[]>();
    const cpuUs = new Map<string, number[]>();
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
        for (const condition of r % 2 === 0 ? conditions : [...conditions].reverse()) {
          const hold: IdleHold | null = condition === 'held' ? holdIdleStates() : null;
          try {
            for (const target of order) {
              const pid = pids[target.name];
              const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
              const result = await timeCalls(clients[target.name], target, perRound);
              if (pid !== undefined) push(cpuUs, `${condition}:${target.name}`, ((cpuSeconds(pid) - cpuBefore) * 1e6) / perRound);
              errors += result.errors;
              const s = summarise(result.samplesUs);
              push(rounds, `${condition}:${target.name}`, s);
              progress(`mcp: round ${r + 1} ${condition} idle ${target.name}: mean ${us(s.mean)}, p50 ${us(s.p50)}, p99 ${us(s.p99)}`);
            }
          } finally {
            hold?.release();
          }
        }
      }
    } finally {
      await direct.close();
      await through.close();
      await hop.close();
      await gateway.stop();
      await bare.stop();
      await toolServer.stop();
    }
    const verdictOn = conditions[0] as Condition;
    const rows: Row[] = [];
    const data: Record<string, unknown> = { callsPerRound: perRound, rounds: ctx.options.rounds, unit: 'µs', idleStates: probe.refused === null ? 'held and default' : `default only (${probe.refused})` };
    for (const condition of conditions) {
      const med = { direct: medianSummary(rounds.get(`${condition}:direct`)!), bare: medianSummary(rounds.get(`${condition}:bare`)!), gateway: medianSummary(rounds.get(`${condition}:gateway`)!) };
      const over = (a: Summary, b: Summary) => ({ mean: a.mean - b.mean, p50: a.p50 - b.p50, p99: a.p99 - b.p99 });
      const added = over(med.gateway, med.direct);
      const hopCost = over(med.bare, med.direct);
      const own = over(med.gateway, med.bare);
      const label = condition === 'held' ? 'idle states held' : 'default idle';
      const row = (figure: string, field: 'mean' | 'p50' | 'p99', target?: number): Row => ({
        figure: `${figure}, ${label}`,
        direct: us(med.direct[field]),
        bare: us(med.bare[field]),
        gateway: us(med.gateway[field]),
        result: `gateway ${signedUs(added[field])} over direct (bare pass-through ${signedUs(hopCost[field])}; gateway − bare ${signedUs(own[field])})`,
        ...(target === undefined ? { verdict: 'info' as const } : { target: `≤ +${target} µs over direct`, verdict: atMost(added[field], target) }),
      });
      const cpu = { bare: median(cpuUs.get(`${condition}:bare`)!), gateway: median(cpuUs.get(`${condition}:gateway`)!) };
      rows.push(
        row(`tools/call c=1 p50, median of ${ctx.options.rounds} × ${perRound}`, 'p50', condition === verdictOn ? TARGET_ADDED_P50_US : undefined),
        row('tools/call c=1 mean', 'mean'),
        row('tools/call c=1 p99', 'p99'),
        { figure: `tools/call CPU per call, proxy process, ${label}`, direct: '—', bare: us(cpu.bare), gateway: us(cpu.gateway), result: `gateway − bare ${signedUs(cpu.gateway - cpu.bare)}`, verdict: 'info' },
      );
      data[condition] = { targets: med, addedByGateway: added, addedByBare: hopCost, gatewayOverBare: own, cpuUsPerCall: cpu };
    }
    data.perRound = Object.fromEntries(rounds);
    data.cpuUsPerCallPerRound = Object.fromEntries(cpuUs);
    return { errors, rows, data, ...(probe.refused === null ? {} : { note: `CPU idle states could not be held (${probe.refused}): the target is read in the machine's default` }) };
  },
};

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
