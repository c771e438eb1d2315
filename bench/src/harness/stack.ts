import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addTally, type GatewayTally, type RunContext } from './context.js';
import { sleep, spawnNode, waitForHttp, waitForOutput, type Child } from './processes.js';

/**
 * The three things a scenario compares, each its own process: the mock provider (talked to
 * directly), the bare pass-through in front of it (the ceiling), and the gateway in front of it.
 */
export const BENCH_MODEL = 'bench-model';
export const BENCH_PROVIDER = 'bench-upstream';

export interface Target {
  name: string;
  /** Origin, e.g. http://127.0.0.1:8080; requests go to `${origin}/v1/chat/completions`. */
  origin: string;
  /** Sent as x-api-key (the mock and the bare pass-through ignore it). */
  key: string;
  model: string;
}

export interface Service {
  child: Child;
  origin: string;
  stop(): Promise<void>;
}

export interface MockService extends Service {
  stats(): Promise<{ requests: number; streams: number; aborted: number; completed: number }>;
  reset(): Promise<void>;
}

export interface GatewayService extends Service {
  /** Scrapes the tally, books it under the scenario, then drains the process (records flushed). */
  stop(): Promise<void>;
  tally(): Promise<GatewayTally>;
}

interface StartOptions {
  raiseFileLimit?: boolean;
  /** PROXY_WORKERS of a gateway (default 1: the comparison with the one-thread bare pass-through). */
  workers?: number;
  /** A providers file of the scenario's own (default: the mock as one openai-typed provider). */
  providersFile?: string;
  /** Wire protocol the gateway speaks to the mock (default openai); the mock answers both. */
  providerType?: 'openai' | 'anthropic';
  /** Environment of the mock (MOCK_CHUNKS, MOCK_GAP_MS: defaults for requests that do not steer it). */
  env?: Record<string, string>;
  /** More environment for a gateway (OTEL_* in the tracing scenario). */
  gatewayEnv?: Record<string, string>;
  /** More environment for the bare pass-through (the breakdown's STEP_TIMES_FILE). */
  bareEnv?: Record<string, string>;
}

export async function startMock(ctx: RunContext, options: StartOptions = {}): Promise<MockService> {
  const child = spawnNode('mock upstream', 'bench/dist/mock-upstream-main.js', ['0'], { raiseFileLimit: options.raiseFileLimit, env: options.env });
  const [, port] = await waitForOutput(child, /listening (\d+)/);
  const origin = `http://127.0.0.1:${port}`;
  return {
    child,
    origin,
    stats: async () => (await (await fetch(`${origin}/__stats`)).json()) as Awaited<ReturnType<MockService['stats']>>,
    reset: async () => {
      await fetch(`${origin}/__reset`, { method: 'POST' });
    },
    stop: async () => {
      await child.stop();
    },
  };
}

/** Under --cpu-prof, a process writes its profile here when it exits. */
export function profileArgs(ctx: RunContext, name: string): string[] {
  return ctx.profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${ctx.profileDir}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`];
}

export async function startBare(ctx: RunContext, upstream: string, options: StartOptions = {}): Promise<Service> {
  const child = spawnNode('bare pass-through', 'bench/dist/bare-passthrough-main.js', ['0'], {
    nodeArgs: profileArgs(ctx, 'bare'),
    env: { UPSTREAM_URL: upstream, ...options.bareEnv },
    raiseFileLimit: options.raiseFileLimit,
  });
  const [, port] = await waitForOutput(child, /listening (\d+)/);
  return {
    child,
    origin: `http://127.0.0.1:${port}`,
    stop: async () => {
      await child.stop();
    },
  };
}

/** A providers file naming the mock as a provider of `type` (OpenAI-compatible by default), with no connection options: the defaults must hold 10k streams. */
export function writeProviders(ctx: RunContext, upstream: string, type: 'openai' | 'anthropic'): string {
  const file = join(ctx.tmpDir, `providers-${type}-${upstream.replace(/\D/g, '')}.json`);
  const providers = {
    providers: [
      {
        name: BENCH_PROVIDER,
        type,
        // The anthropic adapter appends /v1/messages itself.
        base_url: type === 'anthropic' ? upstream : `${upstream}/v1`,
        models: [BENCH_MODEL],
        timeout_ms: 300_000,
        idle_timeout_ms: 300_000,
      },
    ],
  };
  writeFileSync(file, JSON.stringify(providers, null, 2));
  return file;
}

export async function startGateway(ctx: RunContext, upstream: string, scenario: string, options: StartOptions = {}): Promise<GatewayService> {
  const child = spawnNode(`gateway (${scenario})`, 'proxy/dist/main.js', [], {
    nodeArgs: profileArgs(ctx, `gateway-${scenario}`),
    raiseFileLimit: options.raiseFileLimit,
    env: {
      PROXY_HOST: '127.0.0.1',
      PROXY_PORT: '0',
      METRICS_PORT: '0',
      PROXY_WORKERS: String(options.workers ?? 1),
      REDIS_URL: ctx.redisUrl,
      REDIS_PREFIX: ctx.prefix,
      GATEWAY_CONFIG: options.providersFile ?? writeProviders(ctx, upstream, options.providerType ?? 'openai'),
      LOG_LEVEL: 'info',
      DRAIN_TIMEOUT_MS: '3000',
      ...options.gatewayEnv,
    },
  });
  const [, port, metricsPort] = await waitForOutput(child, /"port":(\d+),"metricsPort":(\d+)[^\n]*"msg":"proxy listening"/);
  const origin = `http://127.0.0.1:${port}`;
  const ops = `http://127.0.0.1:${metricsPort}`;
  await waitForHttp(`${origin}/readyz`, child);
  const tally = () => scrapeTally(ops);
  return {
    child,
    origin,
    tally,
    stop: async () => {
      addTally(ctx.ledger, scenario, await settledTally(ops));
      const code = await child.stop('SIGTERM', 20_000);
      if (code !== 0) throw new Error(`${child.name} exited with ${code}:\n${child.output().slice(-2000)}`);
    },
  };
}

/** Waits for requests in flight to finish (cut streams end asynchronously), then scrapes. */
async function settledTally(origin: string): Promise<GatewayTally> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const inFlight = sumMetric(text, 'gateway_requests_in_flight');
    if (inFlight === 0 || Date.now() > deadline) return tallyFrom(text);
    await sleep(50);
  }
}

async function scrapeTally(origin: string): Promise<GatewayTally> {
  return tallyFrom(await (await fetch(`${origin}/metrics`)).text());
}

function tallyFrom(text: string): GatewayTally {
  return {
    requests: sumMetric(text, 'gateway_requests_total'),
    routed: sumMetric(text, 'gateway_requests_total', (labels) => !labels.includes('provider="none"')),
    dropped: sumMetric(text, 'gateway_records_dropped_total'),
  };
}

/** Sums every sample of a Prometheus metric (optionally only those whose labels pass `keep`). */
export function sumMetric(text: string, name: string, keep: (labels: string) => boolean = () => true): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const labels = rest[0] === '{' ? rest.slice(0, rest.indexOf('}') + 1) : '';
    if (!keep(labels)) continue;
    sum += Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The three targets of a comparison, started together and stopped together. */
export interface Trio {
  mock: MockService;
  bare: Service;
  gateway: GatewayService;
  targets: Target[];
  stop(): Promise<void>;
}

/** `options`: the proxies' own environment (the breakdown's STEP_TIMES_FILE). */
export async function startTrio(ctx: RunContext, scenario: string, key: string, options: Pick<StartOptions, 'bareEnv' | 'gatewayEnv'> = {}): Promise<Trio> {
  const mock = await startMock(ctx);
  const bare = await startBare(ctx, mock.origin, options);
  const gateway = await startGateway(ctx, mock.origin, scenario, options);
  const targets: Target[] = [
    { name: 'direct', origin: mock.origin, key, model: BENCH_MODEL },
    { name: 'bare', origin: bare.origin, key, model: BENCH_MODEL },
    { name: 'gateway', origin: gateway.origin, key, model: BENCH_MODEL },
  ];
  return {
    mock,
    bare,
    gateway,
    targets,
    stop: async () => {
      try {
        await gateway.stop();
      } finally {
        await bare.stop();
        await mock.stop();
      }
    },
  };
}
