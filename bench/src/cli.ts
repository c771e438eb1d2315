import { parseArgs } from 'node:util';

/**
 * Command line of `node bench/dist/main.js`. Without --url it measures a local stack it starts
 * itself; with --url it load-tests a running deployment (the key is read from --key or from
 * GATEWAY_BENCH_KEY, which keeps it out of the process list).
 */
export interface BenchOptions {
  /** Scenarios to run, in order; empty: every registered scenario. */
  scenarios: string[];
  quick: boolean;
  rounds: number;
  /** Seconds of each measured window in the saturation scenarios (throughput, auth flood). */
  durationS: number;
  connections: number;
  resultsDir: string;
  recordsCheck: boolean;
  cpuProf: boolean;
  redisUrl: string;
  /** Any database on the PostgreSQL server; fresh databases are created beside it. */
  databaseUrl: string;
  url: string | null;
  key: string | null;
  model: string;
  /** Requests per second over all connections (0: as fast as possible). */
  rate: number;
  stream: boolean;
  help: boolean;
}

export const USAGE = `Usage: node bench/dist/main.js [options]

Local stack (default): starts a mock provider, a bare pass-through and the gateway, and compares.
  --scenario <a,b,…>   run only these (throughput, latency, sequential, breakdown, streaming, anthropic, cloud-providers,
                       endpoints, cache, idle-memory, revocation, auth-flood, failover, mcp, guardrails,
                       tracing, budgets, writer, usage-query, throughput-cluster: the gateway on a six-node
                       Redis Cluster);
                       default: all
  --quick              short windows and small counts (a smoke run, not a measurement)
  --rounds <n>         interleaved rounds per comparison (default 3)
  --duration <s>       seconds per measured window in saturation scenarios (default 10)
  --connections <n>    concurrent connections for saturation scenarios (default 64)
  --results-dir <dir>  where result files go (default bench/results)
  --no-records-check   skip draining the queue into a throwaway database afterwards
  --cpu-prof           run gateway processes under --cpu-prof (profiles in <results-dir>/profiles)

Running deployment (load test):
  --url <gateway url>  e.g. https://gateway.example.com (POSTs to /v1/chat/completions)
  --key <api key>      or set GATEWAY_BENCH_KEY
  --model <id>         model to request (default gpt-4o-mini)
  --connections <n>    concurrent connections (default 64)
  --duration <s>       seconds (default 10)
  --rate <req/s>       fixed overall request rate (default: as fast as it answers)
  --stream             streamed requests (reports time to first byte and chunk gaps)
  --scenario <name>    throughput (default), latency, streaming or auth-flood

Environment: REDIS_URL (default redis://127.0.0.1:6379), BENCH_DATABASE_URL
(default postgres://postgres@127.0.0.1:5432/postgres).`;

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number, got "${raw}"`);
  return value;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string', multiple: true },
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      'results-dir': { type: 'string' },
      'no-records-check': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      url: { type: 'string' },
      key: { type: 'string' },
      model: { type: 'string' },
      rate: { type: 'string' },
      stream: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  const quick = values.quick ?? false;
  return {
    scenarios: (values.scenario ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean),
    quick,
    rounds: Math.max(1, Math.round(positive('rounds', values.rounds, 3))),
    durationS: positive('duration', values.duration, quick ? 1 : 10),
    connections: Math.max(1, Math.round(positive('connections', values.connections, 64))),
    resultsDir: values['results-dir'] ?? 'bench/results',
    recordsCheck: !(values['no-records-check'] ?? false),
    cpuProf: values['cpu-prof'] ?? false,
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    databaseUrl: env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    url: values.url ?? null,
    key: values.key ?? env.GATEWAY_BENCH_KEY ?? null,
    model: values.model ?? 'gpt-4o-mini',
    rate: positive('rate', values.rate, 0),
    stream: values.stream ?? false,
    help: values.help ?? false,
  };
}
