import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Client } from 'undici';
import type { SegmentSummary, StepTimesFile } from '@gateway/proxy/step-clock';
import { userAgent } from '../harness/context.js';
import { chatBody, keepAliveClient, timeSequential } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { cpuSeconds } from '../harness/processes.js';
import { progress } from '../harness/progress.js';
import { signedUs, us, type Row } from '../harness/report.js';
import { startTrio } from '../harness/stack.js';
import { median, rotations, summarise } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Where one request's time goes at concurrency 1, in the gateway and in the bare pass-through side
 * by side: both run with the step clock (STEP_TIMES_FILE), which marks when each step of the
 * gateway starts and when bytes are handed on (to the provider, to the client), and the client
 * times the same requests from outside. In-process wall time minus the CPU time the process
 * spent per request is time spent waiting; the client's time minus the in-process time is what
 * lies outside the proxy's callbacks (the loopback, the kernel, the HTTP parser before the route).
 */
type Name = 'direct' | 'bare' | 'gateway';

/** The marks both proxies make: the request's arrival, its write to the provider, the provider's answer in, the answer written. */
const ARRIVED = 'arrived';
const SENT = 'provider.sent';
const ANSWERED_IN = 'provider.answered';
const WRITTEN = 'answered';

export const breakdown: Scenario = {
  name: 'breakdown',
  title: 'Where one request’s time goes (concurrency 1, step clock)',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const files = { bare: join(ctx.tmpDir, 'steps-bare'), gateway: join(ctx.tmpDir, 'steps-gateway') };
    const trio = await startTrio(ctx, 'breakdown', key.key, { bareEnv: { STEP_TIMES_FILE: files.bare }, gatewayEnv: { STEP_TIMES_FILE: files.gateway } });
    const pids: Record<Name, number> = { direct: trio.mock.child.pid, bare: trio.bare.child.pid, gateway: trio.gateway.child.pid };
    const targets = trio.targets.map((t) => ({ ...t, name: t.name as Name, pid: pids[t.name as Name] }));
    const ua = userAgent('breakdown');
    const perRound = sized(ctx, 3_000, 200);
    const warm = sized(ctx, 1_000, 100);
    const clients = new Map<Name, Client>(targets.map((t) => [t.name, keepAliveClient(t.origin)]));
    const p50s = new Map<Name, number[]>(targets.map((t) => [t.name, []]));
    const cpu = new Map<Name, { seconds: number; requests: number }>(targets.map((t) => [t.name, { seconds: 0, requests: 0 }]));
    let errors = 0;
    try {
      for (const target of targets) {
        progress(`breakdown: warming ${target.name} (${warm} requests)`);
        errors += (await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, warm)).errors;
      }
      const orders = rotations(targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const before = cpuSeconds(target.pid);
          const result = await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, perRound);
          const spent = cpu.get(target.name)!;
          spent.seconds += cpuSeconds(target.pid) - before;
          spent.requests += perRound;
          errors += result.errors;
          const s = summarise(result.samplesUs);
          p50s.get(target.name)!.push(s.p50);
          progress(`breakdown: round ${r + 1}/${orders.length} ${target.name}: p50 ${us(s.p50)}`);
        }
      }
    } finally {
      await Promise.all([...clients.values()].map((c) => c.close()));
      await trio.stop();
    }
    const steps = { bare: readSteps(files.bare), gateway: readSteps(files.gateway) };
    const client = Object.fromEntries([...p50s].map(([name, list]) => [name, median(list)])) as Record<Name, number>;
    const cpuPerRequest = Object.fromEntries([...cpu].map(([name, c]) => [name, (c.seconds / Math.max(1, c.requests)) * 1e6])) as Record<Name, number>;
    return { errors, rows: rows(steps, client, cpuPerRequest), data: { unit: 'µs', requestsPerRound: perRound, rounds: ctx.options.rounds, clientP50: client, cpuPerRequest, steps } };
  },
};

/** The step clock's file of the proxy's one data plane (`<file>.<thread>.json`). */
function readSteps(file: string): StepTimesFile {
  const dir = dirname(file);
  const name = readdirSync(dir).find((f) => f.startsWith(`${basename(file)}.`) && f.endsWith('.json'));
  if (name === undefined) throw new Error(`the step clock wrote no ${file}.<thread>.json`);
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as StepTimesFile;
}

/**
 * Medians of consecutive segments do not add up to the median of their sum; the spans between the
 * shared marks are summed from the segments' means instead, which do add up, and shown beside the
 * per-step medians.
 */
function span(file: StepTimesFile, from: string, to: string): number {
  let total = 0;
  let inside = false;
  for (const s of file.segments) {
    const [a] = s.segment.split(' → ');
    if (a === from) inside = true;
    if (!inside) continue;
    if (a === to) break;
    total += s.mean;
  }
  return total;
}

function rows(steps: Record<'bare' | 'gateway', StepTimesFile>, client: Record<Name, number>, cpu: Record<Name, number>): Row[] {
  const info = (figure: string, bare: string, gateway: string, result: string): Row => ({ figure, bare, gateway, result, verdict: 'info' });
  const spans: [string, string, string][] = [
    ['in the proxy, arrival → provider write (mean)', ARRIVED, SENT],
    ['provider write → its answer read (mean; the provider and two loopback hops)', SENT, ANSWERED_IN],
    ['answer read → last byte handed to the client (mean)', ANSWERED_IN, WRITTEN],
  ];
  const out: Row[] = [
    { figure: 'client p50 (median of rounds)', direct: us(client.direct), bare: us(client.bare), gateway: us(client.gateway), result: `gateway − bare ${signedUs(client.gateway - client.bare)}`, verdict: 'info' },
  ];
  for (const [figure, from, to] of spans) {
    const b = span(steps.bare, from, to);
    const g = span(steps.gateway, from, to);
    out.push(info(figure, us(b), us(g), `gateway − bare ${signedUs(g - b)}`));
  }
  const inBare = span(steps.bare, ARRIVED, WRITTEN);
  const inGateway = span(steps.gateway, ARRIVED, WRITTEN);
  out.push(info('in the proxy, arrival → answer written (mean)', us(inBare), us(inGateway), `gateway − bare ${signedUs(inGateway - inBare)}`));
  out.push(info('CPU per request, own process', us(cpu.bare), us(cpu.gateway), `gateway − bare ${signedUs(cpu.gateway - cpu.bare)} (direct: the mock ${us(cpu.direct)})`));
  const closing = steps.gateway.segments.find((s) => s.segment === `${WRITTEN} → closed`);
  if (closing !== undefined) out.push(info('after the answer: settle, count, records (mean)', '—', us(closing.mean), 'off the request’s path: the answer is already written'));
  // The provider's own time is inside the proxy's span (its wait for the answer), so what remains is the client's hop.
  out.push(info('outside the proxy: client p50 − in the proxy', us(client.bare - inBare), us(client.gateway - inGateway), 'the client’s loopback hop, the kernel, HTTP parsing before the route'));
  for (const s of steps.gateway.segments) out.push(segmentRow(s, steps.bare.segments.find((b) => b.segment === s.segment)));
  return out;
}

function segmentRow(s: SegmentSummary, bare: SegmentSummary | undefined): Row {
  return {
    figure: `step ${s.segment}`,
    ...(bare === undefined ? {} : { bare: `${us(bare.p50)} / ${us(bare.mean)}` }),
    gateway: `${us(s.p50)} / ${us(s.mean)}`,
    result: `p50 / mean, ${s.count.toLocaleString('en-US')} requests`,
    verdict: 'info',
  };
}
