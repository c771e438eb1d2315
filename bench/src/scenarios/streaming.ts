import { Pool } from 'undici';
import { userAgent } from '../harness/context.js';
import { chatBody, timedStream, type StreamOutcome } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { progress } from '../harness/progress.js';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { startTrio, type Target } from '../harness/stack.js';
import { medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Streams of 20 chunks 5 ms apart, a few at a time. Time to first byte is the wait for the first
 * SSE event; the inter-chunk figure is the gap between consecutive events as the client sees
 * them. The provider's own timer jitter is in every target's gaps alike, so what the gateway adds
 * is its gap percentile minus the direct one. Beside them, one stream at a time (a stream of one
 * chunk, so that a round stays short): the first event at concurrency 1, which the target is on.
 */
export const CHUNKS = 20;
export const GAP_MS = 5;
/** Added over the bare pass-through: inter-chunk p99, and time to first byte p50. */
export const TARGET_ADDED_GAP_P99_US = 1_000;
export const TARGET_ADDED_TTFB_P50_US = 100;
/** role chunk + content chunks + finish chunk + usage chunk + [DONE] */
const EXPECTED_EVENTS = CHUNKS + 4;

interface StreamRound {
  ttfb: Summary;
  gaps: Summary;
  upstreamAborted: number;
  /** First event of one stream at a time. */
  alone: Summary;
}

/** Streams per round and target at concurrency 1, and their one chunk. */
const ALONE = 400;
const ALONE_BODY = (model: string) => chatBody(model, { stream: true, mock: { chunks: 1, gap_ms: 0 } });

export function streamBody(model: string): string {
  return chatBody(model, { stream: true, mock: { chunks: CHUNKS, gap_ms: GAP_MS } });
}

export function streamIsComplete(outcome: StreamOutcome): boolean {
  return outcome.status === 200 && outcome.error === null && outcome.events.at(-1)?.data === '[DONE]';
}

/** Runs `count` streams, `concurrency` at a time; returns first-event times and gaps in µs. */
export async function streamBatch(
  pool: Pool,
  target: Target,
  body: string,
  ua: string,
  count: number,
  concurrency: number,
): Promise<{ ttfbUs: number[]; gapsUs: number[]; errors: number; outcomes: number }> {
  const ttfbUs: number[] = [];
  const gapsUs: number[] = [];
  let errors = 0;
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      const outcome = await timedStream(pool, target, body, ua);
      if (!streamIsComplete(outcome)) errors++;
      const events = outcome.events;
      if (events.length > 0) ttfbUs.push(Number((events[0] as { atNs: bigint }).atNs) / 1e3);
      for (let i = 1; i < events.length; i++) gapsUs.push(Number((events[i] as { atNs: bigint }).atNs - (events[i - 1] as { atNs: bigint }).atNs) / 1e3);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ttfbUs, gapsUs, errors, outcomes: count };
}

export const streaming: Scenario = {
  name: 'streaming',
  title: 'Streaming: time to first byte and inter-chunk latency',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const trio = await startTrio(ctx, 'streaming', key.key);
    const ua = userAgent('streaming');
    const concurrency = sized(ctx, 8, 4);
    const perRound = sized(ctx, 240, 16);
    const pools = new Map(trio.targets.map((t) => [t.name, new Pool(t.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 })]));
    const rounds = new Map<string, StreamRound[]>(trio.targets.map((t) => [t.name, []]));
    let errors = 0;
    let eventsMismatch = 0;
    try {
      for (const target of trio.targets) {
        progress(`streaming: warming ${target.name}`);
        const warm = await streamBatch(pools.get(target.name) as Pool, target, streamBody(target.model), ua, concurrency * 2, concurrency);
        errors += warm.errors;
      }
      const orders = rotations(trio.targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const before = await trio.mock.stats();
          const batch = await streamBatch(pools.get(target.name) as Pool, target, streamBody(target.model), ua, perRound, concurrency);
          const after = await trio.mock.stats();
          errors += batch.errors;
          eventsMismatch += batch.gapsUs.length === perRound * (EXPECTED_EVENTS - 1) ? 0 : 1;
          const alone = await streamBatch(pools.get(target.name) as Pool, target, ALONE_BODY(target.model), ua, sized(ctx, ALONE, 20), 1);
          errors += alone.errors;
          const round = { ttfb: summarise(batch.ttfbUs), gaps: summarise(batch.gapsUs), upstreamAborted: after.aborted - before.aborted, alone: summarise(alone.ttfbUs) };
          rounds.get(target.name)?.push(round);
          progress(
            `streaming: round ${r + 1}/${orders.length} ${target.name}: ttfb p50 ${us(round.ttfb.p50)} p99 ${us(round.ttfb.p99)}, ` +
              `gap p50 ${us(round.gaps.p50)} p99 ${us(round.gaps.p99)}, upstream aborted ${round.upstreamAborted}; c=1 first event p50 ${us(round.alone.p50)}`,
          );
        }
      }
    } finally {
      await Promise.all([...pools.values()].map((p) => p.close()));
      await trio.stop();
    }
    const med = (name: string) => {
      const list = rounds.get(name) ?? [];
      return {
        ttfb: medianSummary(list.map((x) => x.ttfb)),
        gaps: medianSummary(list.map((x) => x.gaps)),
        alone: medianSummary(list.map((x) => x.alone)),
        upstreamAborted: list.reduce((n, x) => n + x.upstreamAborted, 0),
      };
    };
    const direct = med('direct');
    const bare = med('bare');
    const gateway = med('gateway');
    const row = (figure: string, pick: (m: ReturnType<typeof med>) => number, target?: number): Row => {
      const added = pick(gateway) - pick(bare);
      return {
        figure,
        direct: us(pick(direct)),
        bare: us(pick(bare)),
        gateway: us(pick(gateway)),
        result: `gateway − bare ${signedUs(added)} (over direct: gateway ${signedUs(pick(gateway) - pick(direct))}, bare ${signedUs(pick(bare) - pick(direct))})`,
        ...(target === undefined ? { verdict: 'info' as const } : { target: `≤ +${target.toLocaleString('en-US')} µs over bare`, verdict: atMost(added, target) }),
      };
    };
    const perTarget = { direct, bare, gateway };
    return {
      errors: errors + eventsMismatch,
      rows: [
        row(`first event p50, one stream at a time (c=1, ${sized(ctx, ALONE, 20)} per round)`, (m) => m.alone.p50, TARGET_ADDED_TTFB_P50_US),
        row('first event p99, one stream at a time', (m) => m.alone.p99),
        row(`time to first byte p50 (${CHUNKS} chunks, ${GAP_MS} ms gap, c=${concurrency})`, (m) => m.ttfb.p50),
        row('time to first byte p99', (m) => m.ttfb.p99),
        row('inter-chunk gap p50', (m) => m.gaps.p50),
        row('inter-chunk gap p99', (m) => m.gaps.p99, TARGET_ADDED_GAP_P99_US),
        {
          figure: 'upstream requests aborted',
          direct: String(direct.upstreamAborted),
          bare: String(bare.upstreamAborted),
          gateway: String(gateway.upstreamAborted),
          result: `of ${perRound * ctx.options.rounds} streams each`,
          verdict: 'info',
        },
      ],
      data: {
        chunks: CHUNKS,
        gapMs: GAP_MS,
        concurrency,
        streamsPerRound: perRound,
        rounds: ctx.options.rounds,
        unit: 'µs',
        targets: perTarget,
        perRound: Object.fromEntries(rounds),
        addedByGateway: { aloneP50: gateway.alone.p50 - direct.alone.p50, ttfbP50: gateway.ttfb.p50 - direct.ttfb.p50, ttfbP99: gateway.ttfb.p99 - direct.ttfb.p99, gapP50: gateway.gaps.p50 - direct.gaps.p50, gapP99: gateway.gaps.p99 - direct.gaps.p99 },
      },
    };
  },
};
