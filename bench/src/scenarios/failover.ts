import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'undici';
import { userAgent, type RunContext } from '../harness/context.js';
import { chatBody, keepAliveClient, timeSequential } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { formatInt, progress } from '../harness/progress.js';
import { ratio, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService, type Target } from '../harness/stack.js';
import { medianSummary, summarise, type Summary } from '../harness/stats.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult } from './throughput.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * The model's first provider is down (its port refuses connections), the second is the mock. Three
 * gateways on the same mock: `healthy` (the mock alone), `failover` (first down, default cooldown:
 * after three failures the dead provider is skipped) and `no-cooldown` (first down and tried on
 * every request). What it shows: with the cooldown, a dead provider costs nothing once found; the
 * price of one failed attempt per request is the no-cooldown latency over healthy.
 */
type Variant = 'healthy' | 'failover' | 'no-cooldown';

function providersFile(ctx: RunContext, upstream: string, variant: Variant): string {
  const healthy = { name: 'bench-upstream', type: 'openai', base_url: `${upstream}/v1`, models: [BENCH_MODEL], max_connections: 20_000 };
  const down = { name: 'down', type: 'openai', base_url: 'http://127.0.0.1:1/v1', models: [BENCH_MODEL] };
  const file = join(ctx.tmpDir, `providers-failover-${variant}.json`);
  const doc =
    variant === 'healthy'
      ? { providers: [healthy] }
      : { providers: [down, healthy], ...(variant === 'no-cooldown' ? { cooldown: { failures: 1_000_000_000 } } : {}) };
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

export const failover: Scenario = {
  name: 'failover',
  title: 'First provider down: failover cost',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const mock = await startMock(ctx);
    const variants: Variant[] = ['healthy', 'failover', 'no-cooldown'];
    const gateways = new Map<Variant, GatewayService>();
    const ua = userAgent('failover');
    const latency = new Map<Variant, Summary[]>(variants.map((v) => [v, []]));
    const load = new Map<Variant, CpuLoadResult[]>(variants.map((v) => [v, []]));
    let errors = 0;
    try {
      for (const v of variants) gateways.set(v, await startGateway(ctx, mock.origin, `failover-${v}`, { providersFile: providersFile(ctx, mock.origin, v) }));
      const perRound = sized(ctx, 3_000, 200);
      for (let r = 0; r < ctx.options.rounds; r++) {
        for (const v of variants) {
          const gw = gateways.get(v) as GatewayService;
          const target: Target = { name: 'gateway', origin: gw.origin, key: key.key, model: BENCH_MODEL };
          const client: Client = keepAliveClient(gw.origin);
          try {
            const seq = await timeSequential(client, target, chatBody(BENCH_MODEL), ua, perRound);
            errors += seq.errors;
            latency.get(v)?.push(summarise(seq.samplesUs));
          } finally {
            await client.close();
          }
          const sat = await saturate(target, gw.child.pid, ctx, Math.min(ctx.options.durationS, 5), ua);
          errors += loadErrors(sat);
          load.get(v)?.push(sat);
          progress(`failover: round ${r + 1}/${ctx.options.rounds} ${v}: c=1 mean ${us(latency.get(v)!.at(-1)!.mean)}, ${formatInt(sat.rps)} req/s`);
        }
      }
    } finally {
      for (const gw of gateways.values()) await gw.stop();
      await mock.stop();
    }
    const lat = (v: Variant) => medianSummary(latency.get(v) ?? []);
    const thr = (v: Variant) => summariseTarget(load.get(v) ?? []);
    const healthy = { lat: lat('healthy'), thr: thr('healthy') };
    const rows: Row[] = (['failover', 'no-cooldown'] as const).flatMap((v) => {
      const l = lat(v);
      const t = thr(v);
      const label = v === 'failover' ? 'first provider down, cooldown on (default)' : 'first provider down, tried on every request';
      return [
        { figure: `${label}: c=1 mean / p99`, gateway: `${us(l.mean)} / ${us(l.p99)}`, result: `vs healthy ${signedUs(l.mean - healthy.lat.mean)} mean`, verdict: 'info' as const },
        { figure: `${label}: req/s, 64 conns`, gateway: rps(t.medianRps), result: `×${ratio(t.medianRps / healthy.thr.medianRps)} of healthy (${rps(healthy.thr.medianRps)})`, verdict: 'info' as const },
      ];
    });
    return {
      errors,
      rows,
      data: { healthy, failover: { latency: lat('failover'), load: thr('failover') }, noCooldown: { latency: lat('no-cooldown'), load: thr('no-cooldown') } },
    };
  },
};
