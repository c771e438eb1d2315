import { Pool } from 'undici';
import type { BenchOptions } from './cli.js';
import { chatBody, chatHeaders, CHAT_PATH, keepAliveClient, timedStream } from './harness/http.js';
import { runLoad, type LoadResult } from './harness/load.js';
import { formatInt, progress } from './harness/progress.js';
import { ms, ratio, rps, us, type Row, type ScenarioResult } from './harness/report.js';
import type { Target } from './harness/stack.js';
import { summarise } from './harness/stats.js';
import { streamIsComplete } from './scenarios/streaming.js';

/**
 * Load-testing a running deployment: the same measurements aimed at one URL, with no direct or
 * bare target to compare against, so the figures are absolute and belong to that deployment and
 * the network in between. Requests reach the real provider behind it and are billed as usual.
 */
const REMOTE_SCENARIOS = ['throughput', 'latency', 'streaming', 'auth-flood'] as const;
type RemoteScenario = (typeof REMOTE_SCENARIOS)[number];

function loadRows(label: string, r: LoadResult): Row[] {
  const codes = Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}: ${formatInt(n)}`)
    .join(', ');
  return [
    { figure: `${label}: throughput`, gateway: rps(r.rps), result: `${formatInt(r.completed)} responses in ${r.durationS.toFixed(1)} s`, verdict: 'info' },
    { figure: `${label}: latency p50 / p90 / p99 / max`, gateway: `${r.latencyMs.p50} / ${r.latencyMs.p90} / ${r.latencyMs.p99} / ${r.latencyMs.max} ms`, result: '', verdict: 'info' },
    { figure: `${label}: status codes`, gateway: codes || 'none', result: `non-2xx ${formatInt(r.non2xx)}, errors ${formatInt(r.errors)}, timeouts ${formatInt(r.timeouts)}`, verdict: 'info' },
  ];
}

async function throughput(o: BenchOptions, target: Target): Promise<{ rows: Row[]; data: Record<string, unknown>; errors: number }> {
  progress(`load test: ${o.connections} connections for ${o.durationS} s${o.rate ? ` at ${o.rate} req/s` : ''}${o.stream ? ', streamed' : ''}`);
  const result = await runLoad({
    url: `${target.origin}${CHAT_PATH}`,
    connections: o.connections,
    durationS: o.durationS,
    rate: o.rate,
    headers: chatHeaders(target, 'gateway-bench/load-test'),
    body: chatBody(target.model, { stream: o.stream }),
  });
  return { rows: loadRows('requests', result), data: { result }, errors: result.errors + result.non2xx };
}

async function latency(o: BenchOptions, target: Target): Promise<{ rows: Row[]; data: Record<string, unknown>; errors: number }> {
  const client = keepAliveClient(target.origin);
  const samples: number[] = [];
  let errors = 0;
  const deadline = Date.now() + o.durationS * 1000;
  const headers = chatHeaders(target, 'gateway-bench/load-test');
  const body = chatBody(target.model);
  progress(`load test: sequential requests for ${o.durationS} s`);
  while (Date.now() < deadline) {
    const t0 = process.hrtime.bigint();
    try {
      const res = await client.request({ path: CHAT_PATH, method: 'POST', headers, body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) errors++;
    } catch {
      errors++;
    }
    samples.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  await client.close();
  const s = summarise(samples);
  return {
    rows: [{ figure: `c=1 latency mean / p50 / p99 (n=${s.count})`, gateway: `${us(s.mean)} / ${us(s.p50)} / ${us(s.p99)}`, result: `errors ${errors}`, verdict: 'info' }],
    data: { unit: 'µs', latency: s, errors },
    errors,
  };
}

async function streaming(o: BenchOptions, target: Target): Promise<{ rows: Row[]; data: Record<string, unknown>; errors: number }> {
  const pool = new Pool(target.origin, { connections: o.connections });
  const ttfb: number[] = [];
  const gaps: number[] = [];
  let errors = 0;
  let streams = 0;
  const deadline = Date.now() + o.durationS * 1000;
  progress(`load test: ${o.connections} concurrent streams for ${o.durationS} s`);
  const worker = async () => {
    while (Date.now() < deadline) {
      const outcome = await timedStream(pool, target, chatBody(target.model, { stream: true }), 'gateway-bench/load-test');
      streams++;
      if (!streamIsComplete(outcome)) errors++;
      const ev = outcome.events;
      if (ev[0]) ttfb.push(Number(ev[0].atNs) / 1e6);
      for (let i = 1; i < ev.length; i++) gaps.push(Number((ev[i] as { atNs: bigint }).atNs - (ev[i - 1] as { atNs: bigint }).atNs) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: o.connections }, worker));
  await pool.close();
  const t = summarise(ttfb);
  const g = summarise(gaps);
  return {
    rows: [
      { figure: `time to first event p50 / p99 (${streams} streams)`, gateway: `${ms(t.p50)} / ${ms(t.p99)}`, result: `errors ${errors}`, verdict: 'info' },
      { figure: 'gap between events p50 / p99', gateway: `${ms(g.p50)} / ${ms(g.p99)}`, result: '', verdict: 'info' },
    ],
    data: { unit: 'ms', streams, ttfb: t, gaps: g, errors },
    errors,
  };
}

async function authFlood(o: BenchOptions, target: Target): Promise<{ rows: Row[]; data: Record<string, unknown>; errors: number }> {
  const headers = chatHeaders(target, 'gateway-bench/load-test');
  const body = chatBody(target.model);
  const url = `${target.origin}${CHAT_PATH}`;
  progress(`load test: good key for ${o.durationS} s, then a flood of bad keys for ${o.durationS} s`);
  const good = await runLoad({ url, connections: o.connections, durationS: o.durationS, rate: o.rate, headers, body, perRequest: (r) => ({ ...r, headers }) });
  let n = 0;
  const stem = `gw_loadtest${Date.now().toString(36)}`;
  const bad = await runLoad({
    url,
    connections: o.connections,
    durationS: o.durationS,
    rate: o.rate,
    headers,
    body,
    perRequest: (r) => ({ ...r, headers: { ...headers, 'x-api-key': `${stem}${(n++).toString(36).padStart(43 - (stem.length - 3), '0')}` } }),
  });
  return {
    rows: [...loadRows('good key', good), ...loadRows('bad keys', bad), { figure: 'bad / good throughput', result: ratio(bad.rps / good.rps), verdict: 'info' }],
    data: { good, bad },
    errors: good.errors + bad.errors,
  };
}

export async function runRemote(o: BenchOptions): Promise<ScenarioResult> {
  if (o.url === null) throw new Error('--url is required');
  if (o.key === null) throw new Error('--key (or GATEWAY_BENCH_KEY) is required with --url');
  const url = new URL(o.url);
  const origin = `${url.protocol}//${url.host}`;
  if (url.pathname !== '/' && url.pathname.replace(/\/+$/, '') !== '/v1') throw new Error('--url must be the gateway origin, e.g. https://gateway.example.com');
  const name = (o.scenarios[0] ?? (o.stream ? 'streaming' : 'throughput')) as RemoteScenario;
  if (!REMOTE_SCENARIOS.includes(name)) throw new Error(`with --url, --scenario is one of ${REMOTE_SCENARIOS.join(', ')}`);
  const target: Target = { name: 'deployment', origin, key: o.key, model: o.model };
  const started = Date.now();
  const run = { throughput, latency, streaming, 'auth-flood': authFlood }[name];
  const out = await run(o, target);
  return {
    name,
    title: `Load test of ${origin}`,
    status: 'ok',
    durationS: (Date.now() - started) / 1000,
    errors: out.errors,
    rows: out.rows,
    data: { url: origin, model: o.model, connections: o.connections, durationS: o.durationS, rate: o.rate, stream: o.stream, ...out.data },
  };
}
