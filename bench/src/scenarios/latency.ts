import type { Client } from 'undici';
import { userAgent } from '../harness/context.js';
import { chatBody, keepAliveClient, timeSequential } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { progress } from '../harness/progress.js';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { startTrio } from '../harness/stack.js';
import { medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Added latency at concurrency 1: sequential requests over one keep-alive connection per target,
 * timed with process.hrtime.bigint. Nothing queues at c=1, so gateway minus direct is the time
 * the gateway itself spends on a request (plus one extra loopback hop, which the bare
 * pass-through shows on its own).
 */
/** Added over the bare pass-through (the practical ceiling), mean at c=1. */
export const TARGET_ADDED_MEAN_US = 50;

export const latency: Scenario = {
  name: 'latency',
  title: 'Added latency at concurrency 1',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const trio = await startTrio(ctx, 'latency', key.key);
    const ua = userAgent('latency');
    const perRound = sized(ctx, 5_000, 300);
    const warm = sized(ctx, 1_000, 100);
    const clients = new Map<string, Client>(trio.targets.map((t) => [t.name, keepAliveClient(t.origin)]));
    const rounds = new Map<string, Summary[]>(trio.targets.map((t) => [t.name, []]));
    let errors = 0;
    try {
      for (const target of trio.targets) {
        progress(`latency: warming ${target.name} (${warm} requests)`);
        errors += (await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, warm)).errors;
      }
      const orders = rotations(trio.targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const result = await timeSequential(clients.get(target.name) as Client, target, chatBody(target.model), ua, perRound);
          errors += result.errors;
          const s = summarise(result.samplesUs);
          rounds.get(target.name)?.push(s);
          progress(`latency: round ${r + 1}/${orders.length} ${target.name}: mean ${us(s.mean)}, p50 ${us(s.p50)}, p99 ${us(s.p99)}`);
        }
      }
    } finally {
      await Promise.all([...clients.values()].map((c) => c.close()));
      await trio.stop();
    }
    const med = Object.fromEntries([...rounds].map(([name, list]) => [name, medianSummary(list)])) as Record<'direct' | 'bare' | 'gateway', Summary>;
    const { direct, bare, gateway } = med;
    const added = { mean: gateway.mean - direct.mean, p50: gateway.p50 - direct.p50, p99: gateway.p99 - direct.p99 };
    const bareAdded = { mean: bare.mean - direct.mean, p50: bare.p50 - direct.p50, p99: bare.p99 - direct.p99 };
    const row = (figure: string, field: 'mean' | 'p50' | 'p99', target?: number): Row => ({
      figure,
      direct: us(direct[field]),
      bare: us(bare[field]),
      gateway: us(gateway[field]),
      result: `gateway − bare ${signedUs(added[field] - bareAdded[field])} (over direct: gateway ${signedUs(added[field])}, bare ${signedUs(bareAdded[field])})`,
      ...(target === undefined ? { verdict: 'info' as const } : { target: `≤ +${target} µs over bare`, verdict: atMost(added.mean - bareAdded.mean, target) }),
    });
    return {
      errors,
      rows: [
        row(`c=1 mean, median of ${ctx.options.rounds} × ${perRound}`, 'mean', TARGET_ADDED_MEAN_US),
        row('c=1 p50', 'p50'),
        row('c=1 p99', 'p99'),
      ],
      data: { requestsPerRound: perRound, rounds: ctx.options.rounds, unit: 'µs', targets: med, perRound: Object.fromEntries(rounds), addedByGateway: added, addedByBare: bareAdded },
    };
  },
};
