import { userAgent } from '../harness/context.js';
import { CHAT_PATH, chatBody } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { progress } from '../harness/progress.js';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { startTrio, type Target } from '../harness/stack.js';
import { median, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Added latency measured the way an independent harness measures gateways (llm-gateway-bench,
 * `probe/overhead.mjs`): sequential requests from Node's global `fetch` with its default dispatcher
 * (a keep-alive connection pool per origin), each timed with `performance.now()` from the call to
 * the last byte of the body, with a 15 s `AbortSignal.timeout` as that harness sets. Targets are
 * taken in interleaved rounds; each round yields one median per target, and the figure is the
 * median over rounds of (target − direct) for the bare pass-through and the gateway. The client
 * costs more per request than the latency scenario's undici Client, the same for every target, so
 * it cancels in the differences; what remains is what an outside observer would publish.
 */
/** Gateway added over bare added, median of round medians. */
export const TARGET_OVER_BARE_P50_US = 100;
/** Gateway added over bare added at p99 (median over rounds of each round's p99). */
export const TARGET_OVER_BARE_P99_US = 300;

type Name = 'direct' | 'bare' | 'gateway';
type Proxy = Exclude<Name, 'direct'>;

/** Rounds of a full run; --rounds raises it, never lowers it below what the method needs. */
const FULL_ROUNDS = 7;
const QUICK_ROUNDS = 3;

interface FetchResult {
  samplesUs: Float64Array;
  errors: number;
}

async function timeFetch(target: Target, body: string, ua: string, count: number): Promise<FetchResult> {
  const url = `${target.origin}${CHAT_PATH}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${target.key}`, 'user-agent': ua };
  const samples = new Float64Array(count);
  let errors = 0;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(15_000) });
      await res.arrayBuffer();
      if (res.status !== 200) errors++;
    } catch {
      errors++;
    }
    samples[i] = (performance.now() - t0) * 1e3;
  }
  return { samplesUs: samples, errors };
}

export const sequential: Scenario = {
  name: 'sequential',
  title: "Added latency, one request at a time (an independent harness's method)",
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const trio = await startTrio(ctx, 'sequential', key.key);
    const ua = userAgent('sequential');
    const perRound = sized(ctx, 500, 100);
    const warm = sized(ctx, 200, 50);
    const roundCount = Math.max(ctx.options.rounds, sized(ctx, FULL_ROUNDS, QUICK_ROUNDS));
    const rounds = new Map<Name, Summary[]>(trio.targets.map((t) => [t.name as Name, []]));
    const pooled = new Map<Name, number[]>(trio.targets.map((t) => [t.name as Name, []]));
    let errors = 0;
    try {
      for (const target of trio.targets) {
        progress(`sequential: warming ${target.name} (${warm} requests)`);
        errors += (await timeFetch(target, chatBody(target.model), ua, warm)).errors;
      }
      const orders = rotations(trio.targets, roundCount);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const result = await timeFetch(target, chatBody(target.model), ua, perRound);
          errors += result.errors;
          const s = summarise(result.samplesUs);
          rounds.get(target.name as Name)?.push(s);
          pooled.get(target.name as Name)?.push(...result.samplesUs);
          progress(`sequential: round ${r + 1}/${orders.length} ${target.name}: p50 ${us(s.p50)}, p99 ${us(s.p99)}`);
        }
      }
    } finally {
      await trio.stop();
    }
    const of = (name: Name) => rounds.get(name) ?? [];
    // Per round: each target's median (and p99) minus direct's in the same round.
    const addedPerRound = (name: Proxy, field: 'p50' | 'p99') => of(name).map((s, i) => s[field] - (of('direct')[i]?.[field] ?? Number.NaN));
    const figures = (name: Proxy) => {
      const p50 = addedPerRound(name, 'p50');
      const p99 = addedPerRound(name, 'p99');
      return { p50: median(p50), min: Math.min(...p50), max: Math.max(...p50), p99: median(p99), perRoundP50: p50, perRoundP99: p99 };
    };
    const added = { bare: figures('bare'), gateway: figures('gateway') };
    const medianOf = (name: Name, field: 'p50' | 'p99') => median(of(name).map((s) => s[field]));
    const pooledP99 = Object.fromEntries([...pooled].map(([name, list]) => [name, summarise(list).p99])) as Record<Name, number>;
    const p50Over = added.gateway.p50 - added.bare.p50;
    const p99Over = added.gateway.p99 - added.bare.p99;
    const cols = (field: 'p50' | 'p99') => ({ direct: us(medianOf('direct', field)), bare: us(medianOf('bare', field)), gateway: us(medianOf('gateway', field)) });
    const rows: Row[] = [
      {
        figure: `fetch c=1 p50, median of ${roundCount} round medians × ${perRound}`,
        ...cols('p50'),
        result: `gateway − bare ${signedUs(p50Over)} (over direct: gateway ${signedUs(added.gateway.p50)}, bare ${signedUs(added.bare.p50)})`,
        target: `≤ +${TARGET_OVER_BARE_P50_US} µs over bare`,
        verdict: atMost(p50Over, TARGET_OVER_BARE_P50_US),
      },
      {
        figure: 'fetch c=1 added over direct, spread of round medians',
        bare: `${signedUs(added.bare.min)} … ${signedUs(added.bare.max)}`,
        gateway: `${signedUs(added.gateway.min)} … ${signedUs(added.gateway.max)}`,
        result: `min … max of ${roundCount} rounds`,
        verdict: 'info',
      },
      {
        figure: 'fetch c=1 p99, median over rounds',
        ...cols('p99'),
        result: `gateway − bare ${signedUs(p99Over)} (over direct: gateway ${signedUs(added.gateway.p99)}, bare ${signedUs(added.bare.p99)})`,
        target: `≤ +${TARGET_OVER_BARE_P99_US} µs over bare`,
        verdict: atMost(p99Over, TARGET_OVER_BARE_P99_US),
      },
    ];
    return {
      errors,
      rows,
      data: {
        client: 'global fetch (default dispatcher), performance.now()',
        requestsPerRound: perRound,
        warmup: warm,
        rounds: roundCount,
        unit: 'µs',
        perRound: Object.fromEntries(rounds),
        addedByBare: added.bare,
        addedByGateway: added.gateway,
        gatewayOverBare: { p50: p50Over, p99: p99Over },
        pooledP99,
      },
    };
  },
};
