import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userAgent, type RunContext } from '../harness/context.js';
import { projectKey } from '../harness/keys.js';
import { formatInt, progress } from '../harness/progress.js';
import { ratio, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService, type Target } from '../harness/stack.js';
import { rotations } from '../harness/stats.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult, type TargetLoad } from './throughput.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * What OpenTelemetry tracing costs the proxy: three gateways on the same mock, measured at
 * saturation in rotated rounds like the throughput scenario: tracing off (no endpoint: the
 * request path makes one null check per hook and loads nothing), on at 1 % sampling
 * (parentbased_traceidratio 0.01: every request still gets an unsampled span and propagates its
 * context) and on at 100 %. Spans go, in the default encoding (protobuf), to a sink in the bench
 * process that answers 200 and counts them; the gateways' own CPU per request is the figure.
 */
type Variant = 'off' | 'sampled-1pct' | 'sampled-100pct';

const VARIANTS: readonly Variant[] = ['off', 'sampled-1pct', 'sampled-100pct'];
const LABEL: Record<Variant, string> = { off: 'tracing off', 'sampled-1pct': 'on, 1 % sampled', 'sampled-100pct': 'on, 100 % sampled' };

/** Every exported span of the proxy carries this attribute key once. */
const SPAN_MARKER = Buffer.from('gen_ai.operation.name');

interface SpanSink {
  url: string;
  spans: number;
  exports: number;
  close(): Promise<void>;
}

function count(body: Buffer, marker: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(marker); at !== -1; at = body.indexOf(marker, at + marker.length)) n++;
  return n;
}

async function startSpanSink(): Promise<SpanSink> {
  const sink = { spans: 0, exports: 0 };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      sink.exports++;
      sink.spans += count(Buffer.concat(parts), SPAN_MARKER);
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get spans() {
      return sink.spans;
    },
    get exports() {
      return sink.exports;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function tracingEnv(variant: Variant, sink: SpanSink | null): Record<string, string> {
  // The off gateway has every other tracing variable set: only the endpoint turns tracing on.
  const common = { OTEL_SERVICE_NAME: `bench-${variant}`, OTEL_BSP_SCHEDULE_DELAY: '1000' };
  if (variant === 'off' || sink === null) return common;
  const sampler: Record<string, string> =
    variant === 'sampled-1pct' ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } : { OTEL_TRACES_SAMPLER: 'parentbased_always_on' };
  return { ...common, ...sampler, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
}

export const tracing: Scenario = {
  name: 'tracing',
  title: 'OpenTelemetry tracing: off, 1 % and 100 % sampled',
  async run(ctx: RunContext): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const ua = userAgent('tracing');
    const mock = await startMock(ctx);
    const sinks = new Map<Variant, SpanSink>();
    const gateways = new Map<Variant, GatewayService>();
    const rounds = new Map<Variant, CpuLoadResult[]>(VARIANTS.map((v) => [v, []]));
    const requests = new Map<Variant, number>();
    try {
      for (const v of VARIANTS) {
        const sink = v === 'off' ? null : await startSpanSink();
        if (sink !== null) sinks.set(v, sink);
        gateways.set(v, await startGateway(ctx, mock.origin, `tracing-${v}`, { gatewayEnv: tracingEnv(v, sink) }));
      }
      const target = (v: Variant): Target => ({ name: v, origin: (gateways.get(v) as GatewayService).origin, key: key.key, model: BENCH_MODEL });
      const pid = (v: Variant) => (gateways.get(v) as GatewayService).child.pid;
      const warm = sized(ctx, 3, 1);
      for (const v of VARIANTS) {
        progress(`tracing: warming ${v} (${warm} s)`);
        await saturate(target(v), pid(v), ctx, warm, ua);
      }
      const orders = rotations(VARIANTS, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const v of order) {
          const result = await saturate(target(v), pid(v), ctx, ctx.options.durationS, ua);
          rounds.get(v)?.push(result);
          progress(`tracing: round ${r + 1}/${orders.length} ${v}: ${formatInt(result.rps)} req/s, ${Math.round(result.cpuUsPerRequest)} µs CPU/request, ${loadErrors(result)} errors`);
        }
      }
      for (const [v, gw] of gateways) requests.set(v, (await gw.tally()).requests);
    } finally {
      // Stopping drains each gateway, which exports the spans it still holds.
      for (const gw of gateways.values()) await gw.stop();
      await mock.stop();
    }
    const spans = new Map([...sinks].map(([v, sink]) => [v, { spans: sink.spans, exports: sink.exports }]));
    for (const sink of sinks.values()) await sink.close();

    const load = Object.fromEntries(VARIANTS.map((v) => [v, summariseTarget(rounds.get(v) ?? [])])) as Record<Variant, TargetLoad>;
    const off = load.off;
    const rows: Row[] = [];
    for (const v of VARIANTS) {
      const l = load[v];
      const label = LABEL[v];
      rows.push({
        figure: `${label}: req/s, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns`,
        gateway: rps(l.medianRps),
        result: v === 'off' ? 'baseline' : `×${ratio(l.medianRps / off.medianRps)} of off`,
        verdict: 'info',
      });
      rows.push({
        figure: `${label}: CPU per request, own process`,
        gateway: us(l.medianCpuUsPerRequest),
        result: v === 'off' ? 'baseline' : `${signedUs(l.medianCpuUsPerRequest - off.medianCpuUsPerRequest)} vs off`,
        verdict: 'info',
      });
      const exported = spans.get(v);
      const served = requests.get(v) ?? 0;
      if (exported !== undefined) {
        // Two spans per sampled request: the request's SERVER span and its provider attempt's CLIENT span.
        const expected = v === 'sampled-100pct' ? 2 : 0.02;
        rows.push({
          figure: `${label}: spans exported per request (expected ~${expected})`,
          gateway: `${formatInt(exported.spans)} spans / ${formatInt(served)} req`,
          result: ratio(exported.spans / Math.max(1, served)),
          verdict: 'info',
        });
      }
    }
    return {
      errors: VARIANTS.reduce((n, v) => n + load[v].errors, 0),
      rows,
      data: {
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        variants: load,
        requests: Object.fromEntries(requests),
        spans: Object.fromEntries(spans),
        cpuPerRequestVsOff: Object.fromEntries(VARIANTS.map((v) => [v, load[v].medianCpuUsPerRequest - off.medianCpuUsPerRequest])),
        rpsVsOff: Object.fromEntries(VARIANTS.map((v) => [v, load[v].medianRps / off.medianRps])),
      },
    };
  },
};
