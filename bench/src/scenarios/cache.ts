import type { Client } from 'undici';
import { userAgent } from '../harness/context.js';
import { chatBody, keepAliveClient, timeSequential } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { formatInt, progress } from '../harness/progress.js';
import { atLeast, atMost, ratio, rps, signedUs, us, type Row } from '../harness/report.js';
import { startTrio } from '../harness/stack.js';
import { median, medianSummary, summarise, type Summary } from '../harness/stats.js';
import { loadErrors, saturate } from './throughput.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * The response cache (docs/caching.md): a project with `cache: {mode: "exact"}` asks the same
 * question again and again, so after the first request every answer is a hit served from Redis.
 * At one connection, a hit's time against the bare pass-through's time to a provider that
 * answers instantly (target: at most +50 µs); at 64 connections, hits per second against the
 * bare pass-through's requests per second (target: at least 1.5 ×).
 */
export const TARGET_HIT_ADDED_US = 50;
export const TARGET_HIT_RPS_RATIO = 1.5;

export const cache: Scenario = {
  name: 'cache',
  title: 'Response cache: hits against the bare pass-through',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys, { cache: { mode: 'exact', ttl_seconds: 3600 } });
    const trio = await startTrio(ctx, 'cache', key.key);
    const ua = userAgent('cache');
    const targets = trio.targets.filter((t) => t.name !== 'direct');
    const perRound = sized(ctx, 5_000, 300);
    const clients = new Map<string, Client>(targets.map((t) => [t.name, keepAliveClient(t.origin)]));
    const sequential = new Map<string, Summary[]>(targets.map((t) => [t.name, []]));
    const loads = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const cpuUs = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const pids = new Map<string, number | undefined>([
      ['bare', trio.bare.child.pid],
      ['gateway', trio.gateway.child.pid],
    ]);
    let errors = 0;
    try {
      // Warming also stores the answer: every later gateway request is a hit.
      for (const target of targets) errors += (await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, sized(ctx, 1_000, 100))).errors;
      for (let r = 0; r < ctx.options.rounds; r++) {
        for (const target of r % 2 === 0 ? targets : [...targets].reverse()) {
          const result = await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, perRound);
          errors += result.errors;
          const s = summarise(result.samplesUs);
          sequential.get(target.name)?.push(s);
          progress(`cache: c=1 round ${r + 1}/${ctx.options.rounds} ${target.name}: mean ${us(s.mean)}`);
        }
        for (const target of targets) {
          const load = await saturate(target, pids.get(target.name) ?? 0, { ...ctx, options: { ...ctx.options, connections: 64 } }, Math.min(ctx.options.durationS, 5), ua);
          errors += loadErrors(load);
          loads.get(target.name)?.push(load.rps);
          cpuUs.get(target.name)?.push(load.cpuUsPerRequest);
          progress(`cache: c=64 round ${r + 1}/${ctx.options.rounds} ${target.name}: ${formatInt(load.rps)} req/s, ${Math.round(load.cpuUsPerRequest)} µs CPU/request`);
        }
      }
    } finally {
      await Promise.all([...clients.values()].map((c) => c.close()));
      await trio.stop();
    }
    const bare = medianSummary(sequential.get('bare') ?? []);
    const hit = medianSummary(sequential.get('gateway') ?? []);
    const bareRps = median(loads.get('bare') ?? []);
    const hitRps = median(loads.get('gateway') ?? []);
    const bareCpu = median(cpuUs.get('bare') ?? []);
    const hitCpu = median(cpuUs.get('gateway') ?? []);
    const rows: Row[] = [
      {
        figure: `c=1 mean, hit vs bare, median of ${ctx.options.rounds} × ${perRound}`,
        bare: us(bare.mean),
        gateway: us(hit.mean),
        result: `hit − bare ${signedUs(hit.mean - bare.mean)}`,
        target: `≤ +${TARGET_HIT_ADDED_US} µs`,
        verdict: atMost(hit.mean - bare.mean, TARGET_HIT_ADDED_US),
      },
      {
        figure: 'c=64 req/s, hits vs bare',
        bare: rps(bareRps),
        gateway: rps(hitRps),
        result: `×${ratio(hitRps / bareRps)}`,
        target: `≥ ${TARGET_HIT_RPS_RATIO} × bare`,
        verdict: atLeast(hitRps / bareRps, TARGET_HIT_RPS_RATIO),
      },
      {
        figure: 'c=64 CPU per request, own process (median of rounds)',
        bare: us(bareCpu),
        gateway: us(hitCpu),
        result: `hit/bare ×${ratio(hitCpu / bareCpu)}`,
        verdict: 'info',
      },
    ];
    return { errors, rows, data: { unit: 'µs', sequential: { bare, hit }, rps: { bare: bareRps, hit: hitRps }, cpuUsPerRequest: { bare: bareCpu, hit: hitCpu }, perRound: Object.fromEntries(sequential), loads: Object.fromEntries(loads) } };
  },
};
