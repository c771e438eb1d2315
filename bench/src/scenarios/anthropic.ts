import { Pool } from 'undici';
import { userAgent } from '../harness/context.js';
import { chatBody, timedStream } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { formatInt, progress } from '../harness/progress.js';
import { ratio, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService, type Target } from '../harness/stack.js';
import { medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';
import { streamIsComplete } from './streaming.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult } from './throughput.js';

/**
 * What translating to and from Anthropic's Messages API costs. Two gateways with one worker
 * each stand in front of the same mock provider. One has an openai-typed provider: the body goes
 * as it came, and chunks pass through. The other has an anthropic-typed provider: each request
 * is translated, and so is each answer or stream event. The mock answers both wire formats with
 * the same content, timing and chunking. The figures are the second gateway's against the
 * first's: non-streaming req/s and CPU per request at saturation, and streaming inter-chunk gaps.
 */
const CHUNKS = 20;
const GAP_MS = 5;
const TYPES = ['openai', 'anthropic'] as const;
type ProviderType = (typeof TYPES)[number];

interface StreamRound {
  ttfb: Summary;
  gaps: Summary;
}

/**
 * Streams `count` requests, `concurrency` at a time. Gaps are taken from the role chunk to the
 * finish chunk. The usage chunk and [DONE] are left out, because the two wire formats end a
 * stream differently: OpenAI sends usage and [DONE] as frames of their own, Anthropic's last
 * events come in one write.
 */
function hasChoice(data: string): boolean {
  if (data === '[DONE]') return false;
  try {
    return ((JSON.parse(data) as { choices?: unknown[] }).choices?.length ?? 0) > 0;
  } catch {
    return false;
  }
}

async function streamRound(pool: Pool, target: Target, ua: string, count: number, concurrency: number): Promise<StreamRound & { errors: number }> {
  const body = chatBody(target.model, { stream: true });
  const ttfbUs: number[] = [];
  const gapsUs: number[] = [];
  let errors = 0;
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      const outcome = await timedStream(pool, target, body, ua);
      const content = outcome.events.filter((e) => hasChoice(e.data));
      // Role chunk, the content chunks, the finish chunk.
      if (!streamIsComplete(outcome) || content.length !== CHUNKS + 2) errors++;
      if (content.length > 0) ttfbUs.push(Number(content[0]!.atNs) / 1e3);
      for (let i = 1; i < content.length; i++) gapsUs.push(Number(content[i]!.atNs - content[i - 1]!.atNs) / 1e3);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ttfb: summarise(ttfbUs), gaps: summarise(gapsUs), errors };
}

export const anthropic: Scenario = {
  name: 'anthropic',
  title: 'Anthropic adapter: translation cost over the OpenAI pass-through',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    // Streams without a `mock` field (the anthropic adapter does not forward it) get these.
    const mock = await startMock(ctx, { env: { MOCK_CHUNKS: String(CHUNKS), MOCK_GAP_MS: String(GAP_MS) } });
    const gateways = new Map<ProviderType, GatewayService>();
    const saturation = new Map<ProviderType, CpuLoadResult[]>(TYPES.map((t) => [t, []]));
    const streams = new Map<ProviderType, StreamRound[]>(TYPES.map((t) => [t, []]));
    let errors = 0;
    const concurrency = sized(ctx, 8, 4);
    const perRound = sized(ctx, 240, 16);
    const pools: Pool[] = [];
    try {
      for (const type of TYPES) gateways.set(type, await startGateway(ctx, mock.origin, 'anthropic', { providerType: type }));
      const targets: Target[] = TYPES.map((type) => ({ name: type, origin: (gateways.get(type) as GatewayService).origin, key: key.key, model: BENCH_MODEL }));
      const pidOf = (t: Target) => (gateways.get(t.name as ProviderType) as GatewayService).child.pid;
      const ua = (t: Target) => userAgent('anthropic', t.name);
      const poolOf = new Map(targets.map((t) => [t.name, new Pool(t.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 })]));
      pools.push(...poolOf.values());

      for (const target of targets) {
        progress(`anthropic: warming the ${target.name}-typed gateway`);
        await saturate(target, pidOf(target), ctx, sized(ctx, 3, 1), ua(target));
        errors += (await streamRound(poolOf.get(target.name) as Pool, target, ua(target), concurrency * 2, concurrency)).errors;
      }
      const orders = rotations(targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const type = target.name as ProviderType;
          const load = await saturate(target, pidOf(target), ctx, ctx.options.durationS, ua(target));
          saturation.get(type)?.push(load);
          errors += loadErrors(load);
          const round = await streamRound(poolOf.get(target.name) as Pool, target, ua(target), perRound, concurrency);
          streams.get(type)?.push(round);
          errors += round.errors;
          progress(
            `anthropic: round ${r + 1}/${orders.length} ${type}-typed: ${formatInt(load.rps)} req/s, ${Math.round(load.cpuUsPerRequest)} µs CPU/request; ` +
              `stream gap p50 ${us(round.gaps.p50)} p99 ${us(round.gaps.p99)}`,
          );
        }
      }
    } finally {
      await Promise.all(pools.map((p) => p.close()));
      try {
        for (const gateway of gateways.values()) await gateway.stop();
      } finally {
        await mock.stop();
      }
    }

    const load = Object.fromEntries(TYPES.map((t) => [t, summariseTarget(saturation.get(t) ?? [])])) as Record<ProviderType, ReturnType<typeof summariseTarget>>;
    const stream = Object.fromEntries(
      TYPES.map((t) => {
        const list = streams.get(t) ?? [];
        return [t, { ttfb: medianSummary(list.map((x) => x.ttfb)), gaps: medianSummary(list.map((x) => x.gaps)) }];
      }),
    ) as Record<ProviderType, StreamRound>;
    const o = load.openai;
    const a = load.anthropic;
    const both = (format: (v: number) => string, pick: (t: ProviderType) => number) => `openai ${format(pick('openai'))} / anthropic ${format(pick('anthropic'))}`;
    const streamRow = (figure: string, pick: (s: StreamRound) => number): Row => ({
      figure,
      gateway: both(us, (t) => pick(stream[t])),
      result: `added ${signedUs(pick(stream.anthropic) - pick(stream.openai))}`,
      verdict: 'info',
    });
    const rows: Row[] = [
      {
        figure: `req/s, 1 worker, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns`,
        gateway: both(rps, (t) => load[t].medianRps),
        result: `anthropic/openai ${ratio(a.medianRps / o.medianRps)}`,
        verdict: 'info',
      },
      {
        figure: 'CPU per request, gateway process',
        gateway: both(us, (t) => load[t].medianCpuUsPerRequest),
        result: `translation ${signedUs(a.medianCpuUsPerRequest - o.medianCpuUsPerRequest)} per request`,
        verdict: 'info',
      },
      streamRow(`stream inter-chunk gap p50 (${CHUNKS} chunks, ${GAP_MS} ms gap, c=${concurrency})`, (s) => s.gaps.p50),
      streamRow('stream inter-chunk gap p99', (s) => s.gaps.p99),
      streamRow('stream time to first chunk p50', (s) => s.ttfb.p50),
    ];
    return {
      errors,
      rows,
      data: {
        unit: 'µs',
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        chunks: CHUNKS,
        gapMs: GAP_MS,
        concurrency,
        streamsPerRound: perRound,
        nonStreaming: load,
        streaming: stream,
        anthropicVsOpenai: {
          rps: a.medianRps / o.medianRps,
          cpuUsPerRequestAdded: a.medianCpuUsPerRequest - o.medianCpuUsPerRequest,
          gapP50Added: stream.anthropic.gaps.p50 - stream.openai.gaps.p50,
          gapP99Added: stream.anthropic.gaps.p99 - stream.openai.gaps.p99,
        },
      },
    };
  },
};
