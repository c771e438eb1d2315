import type { RunContext } from '../harness/context.js';
import { userAgent } from '../harness/context.js';
import { chatBody, chatHeaders, CHAT_PATH } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { runLoad, type LoadResult } from '../harness/load.js';
import { cpuSeconds } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atLeast, ms, ratio, rps, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startTrio, type Target } from '../harness/stack.js';
import { median, rotations } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Non-streaming requests at saturation: 64 connections, no pipelining, each target in turn, the
 * order rotated every round. The figure is the gateway's median req/s over the bare
 * pass-through's: what the features cost in capacity, with the same server library, the same
 * upstream client and the same mock provider on both sides.
 */
export const TARGET_RATIO = 0.85;
/** Worker threads of the extra gateway measured after the comparison (this machine's core count). */
const WORKERS = 2;

export interface CpuLoadResult extends LoadResult {
  /** CPU time the target's own process spent per completed request, in µs. */
  cpuUsPerRequest: number;
}

export interface TargetLoad {
  rounds: CpuLoadResult[];
  medianRps: number;
  medianCpuUsPerRequest: number;
  medianP50Ms: number;
  medianP99Ms: number;
  errors: number;
}

export function loadErrors(r: LoadResult): number {
  return r.errors + r.non2xx;
}

export function summariseTarget(rounds: CpuLoadResult[]): TargetLoad {
  return {
    rounds,
    medianRps: median(rounds.map((r) => r.rps)),
    medianCpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest)),
    medianP50Ms: median(rounds.map((r) => r.latencyMs.p50)),
    medianP99Ms: median(rounds.map((r) => r.latencyMs.p99)),
    errors: rounds.reduce((n, r) => n + loadErrors(r), 0),
  };
}

/** One saturation window; `pid` is the process whose CPU time is billed to the target. */
/** Load as fast as the target answers, or at `rate` req/s over all connections; the target's CPU per request. */
export async function saturate(target: Target, pid: number, ctx: RunContext, durationS: number, ua: string, rate?: number): Promise<CpuLoadResult> {
  const cpuBefore = cpuSeconds(pid);
  const result = await runLoad({
    url: `${target.origin}${CHAT_PATH}`,
    connections: ctx.options.connections,
    durationS,
    headers: chatHeaders(target, ua),
    body: chatBody(target.model),
    ...(rate === undefined ? {} : { rate }),
  });
  return { ...result, cpuUsPerRequest: ((cpuSeconds(pid) - cpuBefore) * 1e6) / Math.max(1, result.completed) };
}

export const throughput: Scenario = {
  name: 'throughput',
  title: 'Non-streaming throughput at saturation',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const trio = await startTrio(ctx, 'throughput', key.key);
    const ua = userAgent('throughput');
    const results = new Map<string, CpuLoadResult[]>(trio.targets.map((t) => [t.name, []]));
    const workerRounds: CpuLoadResult[] = [];
    // The mock's CPU for direct; each proxy's own CPU for the others (the mock's is the same behind both).
    const pidOf = (t: Target) => (t.name === 'direct' ? trio.mock.child.pid : t.name === 'bare' ? trio.bare.child.pid : trio.gateway.child.pid);
    try {
      const warm = sized(ctx, 3, 1);
      for (const target of trio.targets) {
        progress(`throughput: warming ${target.name} (${warm} s)`);
        await saturate(target, pidOf(target), ctx, warm, ua);
      }
      const orders = rotations(trio.targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const result = await saturate(target, pidOf(target), ctx, ctx.options.durationS, ua);
          results.get(target.name)?.push(result);
          progress(
            `throughput: round ${r + 1}/${orders.length} ${target.name}: ${formatInt(result.rps)} req/s, p99 ${result.latencyMs.p99} ms, ` +
              `${Math.round(result.cpuUsPerRequest)} µs CPU/request, ${loadErrors(result)} errors`,
          );
        }
      }
      // The same gateway on every core: PROXY_WORKERS=2 (a process of its own, same key and mock).
      const multi = await startGateway(ctx, trio.mock.origin, 'throughput-workers', { workers: WORKERS });
      try {
        const target: Target = { name: 'gateway', origin: multi.origin, key: key.key, model: BENCH_MODEL };
        await saturate(target, multi.child.pid, ctx, sized(ctx, 3, 1), ua);
        for (let r = 0; r < ctx.options.rounds; r++) {
          const result = await saturate(target, multi.child.pid, ctx, ctx.options.durationS, ua);
          workerRounds.push(result);
          progress(`throughput: round ${r + 1}/${ctx.options.rounds} gateway ×${WORKERS} workers: ${formatInt(result.rps)} req/s, ${loadErrors(result)} errors`);
        }
      } finally {
        await multi.stop();
      }
    } finally {
      await trio.stop();
    }
    const workers = summariseTarget(workerRounds);
    const byTarget = Object.fromEntries([...results].map(([name, rounds]) => [name, summariseTarget(rounds)])) as Record<'direct' | 'bare' | 'gateway', TargetLoad>;
    const { direct, bare, gateway } = byTarget;
    const vsBare = gateway.medianRps / bare.medianRps;
    const vsDirect = gateway.medianRps / direct.medianRps;
    const rows: Row[] = [
      {
        figure: `req/s, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns`,
        direct: rps(direct.medianRps),
        bare: rps(bare.medianRps),
        gateway: rps(gateway.medianRps),
        result: `gateway/bare ${ratio(vsBare)}`,
        target: `≥ ${TARGET_RATIO}`,
        verdict: atLeast(vsBare, TARGET_RATIO),
      },
      { figure: 'gateway / direct', result: ratio(vsDirect), verdict: 'info' },
      {
        figure: `PROXY_WORKERS=${WORKERS} (one process, every core)`,
        gateway: rps(workers.medianRps),
        result: `×${ratio(workers.medianRps / gateway.medianRps)} of 1 worker`,
        verdict: 'info',
      },
      {
        figure: 'CPU per request, own process (direct: the mock)',
        direct: us(direct.medianCpuUsPerRequest),
        bare: us(bare.medianCpuUsPerRequest),
        gateway: us(gateway.medianCpuUsPerRequest),
        result: `gateway/bare ×${ratio(gateway.medianCpuUsPerRequest / bare.medianCpuUsPerRequest)}`,
        verdict: 'info',
      },
      {
        figure: 'latency p50 / p99 under load',
        direct: `${ms(direct.medianP50Ms, 1)} / ${ms(direct.medianP99Ms, 1)}`,
        bare: `${ms(bare.medianP50Ms, 1)} / ${ms(bare.medianP99Ms, 1)}`,
        gateway: `${ms(gateway.medianP50Ms, 1)} / ${ms(gateway.medianP99Ms, 1)}`,
        result: '',
        verdict: 'info',
      },
    ];
    return {
      errors: direct.errors + bare.errors + gateway.errors,
      rows,
      data: {
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        targets: byTarget,
        gatewayVsBare: vsBare,
        gatewayVsDirect: vsDirect,
        workers: { count: WORKERS, ...workers, vsOneWorker: workers.medianRps / gateway.medianRps },
        cpuPerRequestGatewayVsBare: gateway.medianCpuUsPerRequest / bare.medianCpuUsPerRequest,
      },
    };
  },
};
