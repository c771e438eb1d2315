import { Pool } from 'undici';
import { userAgent, type RunContext } from '../harness/context.js';
import { chatBody, chatHeaders, keepAliveClient, timeSequential } from '../harness/http.js';
import { holdStreams, openHeldStream, type HeldStream } from '../harness/hold.js';
import { projectKey } from '../harness/keys.js';
import { fileLimits, rssBytes, sleep } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atMost, kib, type Row } from '../harness/report.js';
import { BENCH_MODEL, startBare, startGateway, startMock, type Service, type Target } from '../harness/stack.js';
import { median } from '../harness/stats.js';
import { streamBatch, streamBody } from './streaming.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Memory per concurrent idle stream: streams the provider has started (one chunk) and then leaves
 * silent, held open by plain sockets. Each target runs in a fresh process; its RSS at each level
 * minus its RSS before the first stream, divided by the streams held, is the cost of one.
 */
export const TARGET_PER_STREAM_BYTES = 32 * 1024;
export const TARGET_FIRST_EVENT_ADDED_US = 100;
/** Streams opened one by one beside the held ones to time their first event. */
const PROBES = 200;
/** Descriptors a process needs besides the streams' sockets (Redis, listeners, stdio, epoll…). */
const SPARE_FDS = 128;

async function sampleRss(pid: number, samples = 5): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < samples; i++) {
    values.push(rssBytes(pid));
    await sleep(200);
  }
  return median(values);
}

/**
 * The levels this machine allows: a proxy holds two sockets per stream (client and provider),
 * and the bench one, so the open-files limits cap the largest level.
 */
export function feasibleLevels(wanted: number[]): { levels: number[]; cap: number; limits: { soft: number; hard: number } } {
  const limits = fileLimits();
  const cap = Math.max(1, Math.min(Math.floor((limits.hard - SPARE_FDS) / 2), limits.soft - SPARE_FDS));
  const levels = [...new Set(wanted.map((l) => Math.min(l, cap)))];
  return { levels, cap, limits };
}

interface TargetMemory {
  baselineBytes: number;
  levels: { streams: number; rssBytes: number; perStreamBytes: number; openFailures: number }[];
  /** First event p50 of streams opened one at a time while the top level is held. */
  probeFirstEventP50Us: number;
}

async function measure(ctx: RunContext, name: 'bare' | 'gateway', levels: number[], settleMs: number, key: string): Promise<TargetMemory> {
  const mock = await startMock(ctx, { raiseFileLimit: true });
  const service: Service = name === 'bare' ? await startBare(ctx, mock.origin, { raiseFileLimit: true }) : await startGateway(ctx, mock.origin, 'idle-memory', { raiseFileLimit: true });
  const target: Target = { name, origin: service.origin, key, model: BENCH_MODEL };
  const ua = userAgent('idle-memory');
  const held: HeldStream[] = [];
  try {
    // Warm first, so JIT code and connection pools are in the baseline and not billed to streams.
    const client = keepAliveClient(service.origin);
    await timeSequential(client, target, chatBody(BENCH_MODEL), ua, 200);
    await client.close();
    const pool = new Pool(service.origin, { connections: 8 });
    await streamBatch(pool, target, streamBody(BENCH_MODEL), ua, 32, 8);
    await pool.close();
    await sleep(settleMs);
    const baselineBytes = await sampleRss(service.child.pid);
    progress(`idle-memory: ${name} baseline RSS ${(baselineBytes / 2 ** 20).toFixed(1)} MiB`);
    const body = chatBody(BENCH_MODEL, { stream: true, mock: { hang_after_chunks: 1 } });
    const headers = chatHeaders(target, ua);
    const out: TargetMemory = { baselineBytes, levels: [], probeFirstEventP50Us: Number.NaN };
    for (const level of levels) {
      const failures = await holdStreams(held, level, 200, () => openHeldStream(service.origin, headers, body));
      await sleep(settleMs);
      const rss = await sampleRss(service.child.pid);
      const perStream = (rss - baselineBytes) / level;
      out.levels.push({ streams: level, rssBytes: rss, perStreamBytes: perStream, openFailures: failures });
      progress(`idle-memory: ${name} ${formatInt(level)} streams: RSS ${(rss / 2 ** 20).toFixed(1)} MiB, ${kib(perStream)} per stream, ${failures} not answered 200`);
    }
    // With the top level held, new streams one at a time: what holding them costs a new one.
    const probes: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const probe = await openHeldStream(service.origin, headers, body);
      probes.push(probe.firstEventUs);
      probe.close();
    }
    out.probeFirstEventP50Us = median(probes);
    progress(`idle-memory: ${name} first event p50 of a new stream beside ${formatInt(held.length)}: ${Math.round(out.probeFirstEventP50Us)} µs`);
    return out;
  } finally {
    for (const h of held) h.close();
    await sleep(500);
    await service.stop();
    await mock.stop();
  }
}

export const idleMemory: Scenario = {
  name: 'idle-memory',
  title: 'Memory per concurrent idle stream',
  async run(ctx): Promise<ScenarioOutcome> {
    const { levels, cap, limits } = feasibleLevels(sized(ctx, [1_000, 5_000, 10_000], [100, 300]));
    const wantedTop = sized(ctx, 10_000, 300);
    if (cap < wantedTop) progress(`idle-memory: open-files limit ${limits.soft}/${limits.hard} allows at most ${formatInt(cap)} streams per proxy (two sockets each)`);
    const settleMs = sized(ctx, 2_000, 500);
    const key = await projectKey(ctx.redis, ctx.keys);
    const bare = await measure(ctx, 'bare', levels, settleMs, key.key);
    const gateway = await measure(ctx, 'gateway', levels, settleMs, key.key);
    const rows: Row[] = [
      {
        figure: 'RSS before streams',
        bare: `${(bare.baselineBytes / 2 ** 20).toFixed(1)} MiB`,
        gateway: `${(gateway.baselineBytes / 2 ** 20).toFixed(1)} MiB`,
        result: '',
        verdict: 'info',
      },
    ];
    levels.forEach((level, i) => {
      const b = bare.levels[i];
      const g = gateway.levels[i];
      const clamped = level < wantedTop && i === levels.length - 1 ? ` (capped by open-files limit ${limits.hard})` : '';
      rows.push({
        figure: `RSS per idle stream at ${formatInt(level)}${clamped}`,
        bare: kib(b?.perStreamBytes ?? Number.NaN),
        gateway: kib(g?.perStreamBytes ?? Number.NaN),
        result: `gateway − bare ${kib((g?.perStreamBytes ?? Number.NaN) - (b?.perStreamBytes ?? Number.NaN))}`,
        target: `≤ ${TARGET_PER_STREAM_BYTES / 1024} KiB`,
        verdict: atMost(g?.perStreamBytes ?? Number.NaN, TARGET_PER_STREAM_BYTES),
      });
    });
    const top = levels.at(-1) ?? 0;
    const addedUs = gateway.probeFirstEventP50Us - bare.probeFirstEventP50Us;
    rows.push({
      figure: `first event p50, a new stream beside ${formatInt(top)} held (${PROBES} one by one)`,
      bare: `${Math.round(bare.probeFirstEventP50Us)} µs`,
      gateway: `${Math.round(gateway.probeFirstEventP50Us)} µs`,
      result: `gateway − bare ${addedUs >= 0 ? '+' : '−'}${Math.round(Math.abs(addedUs))} µs`,
      target: `≤ +${TARGET_FIRST_EVENT_ADDED_US} µs`,
      verdict: atMost(addedUs, TARGET_FIRST_EVENT_ADDED_US),
    });
    const gatewayFailures = gateway.levels.reduce((n, l) => n + l.openFailures, 0);
    rows.push({
      figure: `streams not answered 200 (of ${formatInt(top)})`,
      bare: String(bare.levels.reduce((n, l) => n + l.openFailures, 0)),
      gateway: String(gatewayFailures),
      result: gatewayFailures === 0 ? 'every stream 200' : `${gatewayFailures} failed`,
      target: '0',
      verdict: atMost(gatewayFailures, 0),
    });
    const failures = [...bare.levels, ...gateway.levels].reduce((n, l) => n + l.openFailures, 0);
    return {
      errors: failures,
      rows,
      data: { levels, fileLimits: limits, streamCap: cap, settleMs, unit: 'bytes', targets: { bare, gateway } },
    };
  },
};
