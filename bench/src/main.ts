import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisKeys } from '@gateway/shared';
import { parseOptions, USAGE, type BenchOptions } from './cli.js';
import type { RunContext } from './harness/context.js';
import { dropAllDatabases } from './harness/database.js';
import { clearPrefix } from './harness/keys.js';
import { killAll, ROOT } from './harness/processes.js';
import { formatProfile } from './harness/profile-summary.js';
import { progress } from './harness/progress.js';
import { checkRecordsLand } from './harness/records-check.js';
import type { ScenarioResult } from './harness/report.js';
import { machineInfo, timestamp, writeResults, type RunResults } from './harness/results.js';
import { consoleTable } from './harness/table.js';
import { runRemote } from './remote.js';
import { findScenarios, SCENARIOS } from './scenarios/registry.js';

/**
 * `npm run bench`: what the gateway costs over talking to the provider directly, measured in one
 * run so every figure is a ratio or a difference taken under the same conditions. With --url it
 * load-tests a running deployment instead.
 */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: true, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new Error(`Redis is not reachable at ${url} (${(err as Error).message}); the local bench needs it`);
  }
  return redis;
}

async function runLocal(options: BenchOptions, resultsDir: string): Promise<{ results: ScenarioResult[]; profileDir: string | null; machine: RunResults['machine'] }> {
  const scenarios = findScenarios(options.scenarios);
  const redis = await connectRedis(options.redisUrl);
  const prefix = `gwbench:${randomBytes(4).toString('hex')}:`;
  const profileDir = options.cpuProf ? join(resultsDir, 'profiles', timestamp()) : null;
  if (profileDir !== null) mkdirSync(profileDir, { recursive: true });
  const ctx: RunContext = {
    options,
    redisUrl: options.redisUrl,
    prefix,
    redis,
    keys: new RedisKeys(prefix),
    tmpDir: mkdtempSync(join(tmpdir(), 'gwbench-')),
    profileDir,
    ledger: new Map(),
  };
  const results: ScenarioResult[] = [];
  // Interrupted: stop what was started, let the running scenario unwind (its children are gone,
  // so it fails at once), then remove what was made, within a bound, and leave.
  let stopping = false;
  const interrupted = (signal: NodeJS.Signals) => {
    progress(`${signal}: stopping`);
    stopping = true;
    killAll();
    const cleanup = new Promise((resolve) => setTimeout(resolve, 500)).then(() => Promise.allSettled([clearPrefix(redis, prefix), dropAllDatabases()]));
    const deadline = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    void Promise.race([cleanup, deadline]).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const machine = await machineInfo(redis, options.databaseUrl);
  progress(`running ${scenarios.map((s) => s.name).join(', ')}${options.quick ? ' (quick)' : ''} on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);
  try {
    for (const scenario of scenarios) {
      if (stopping) break;
      const started = Date.now();
      progress(`▶ ${scenario.name}: ${scenario.title}`);
      try {
        const outcome = await scenario.run(ctx);
        results.push({ name: scenario.name, title: scenario.title, status: outcome.status ?? 'ok', durationS: (Date.now() - started) / 1000, ...outcome });
        if (outcome.status === 'skipped') progress(`${scenario.name}: skipped (${outcome.note ?? ''})`);
      } catch (err) {
        progress(`${scenario.name}: FAILED: ${(err as Error).stack ?? String(err)}`);
        results.push({ name: scenario.name, title: scenario.title, status: 'failed', note: (err as Error).message.split('\n')[0], durationS: (Date.now() - started) / 1000, errors: 1, rows: [], data: {} });
      }
    }
    if (options.recordsCheck && !stopping) {
      progress('▶ records: the writer drains the queue into a throwaway database');
      try {
        const check = await checkRecordsLand(ctx);
        if (check !== null) results.push(check);
      } catch (err) {
        progress(`records: FAILED: ${(err as Error).message}`);
        results.push({ name: 'records', title: 'Every record lands', status: 'failed', note: (err as Error).message.split('\n')[0], durationS: 0, errors: 1, rows: [], data: {} });
      }
    }
  } finally {
    await clearPrefix(redis, prefix).catch(() => 0);
    await dropAllDatabases();
    redis.disconnect();
    rmSync(ctx.tmpDir, { recursive: true, force: true });
  }
  return { results, profileDir, machine };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const resultsDir = isAbsolute(options.resultsDir) ? options.resultsDir : join(ROOT, options.resultsDir);
  const startedAt = new Date().toISOString();
  // Other work on the machine shows here; a run taken under load is worth less.
  const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  let scenarios: ScenarioResult[];
  let profileDir: string | null = null;
  let machine: RunResults['machine'];
  if (options.url !== null) {
    machine = await machineInfo(null, null);
    scenarios = [await runRemote(options)];
  } else {
    ({ results: scenarios, profileDir, machine } = await runLocal(options, resultsDir));
  }
  const results: RunResults = {
    schema: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: options.url !== null ? 'remote' : options.quick ? 'quick' : 'full',
    machine,
    settings: {
      rounds: options.rounds,
      durationS: options.durationS,
      connections: options.connections,
      loadAverage: { start: loadAtStart, end: loadavg().map((l) => Number(l.toFixed(2))) },
      scenarios: options.url !== null ? scenarios.map((s) => s.name) : findScenarios(options.scenarios).map((s) => s.name),
      ...(options.url !== null ? { url: new URL(options.url).origin, model: options.model, rate: options.rate, stream: options.stream } : {}),
    },
    scenarios,
  };
  // Only a complete run of every scenario may replace the committed reference figures.
  const isReference =
    options.url === null &&
    !options.quick &&
    (options.scenarios.length === 0 || options.scenarios.length === SCENARIOS.length) &&
    scenarios.every((s) => s.status !== 'failed');
  const name = options.url !== null ? `remote-${timestamp(new Date(startedAt))}` : timestamp(new Date(startedAt));
  const written = writeResults(resultsDir, results, isReference, name);
  process.stdout.write(`\n${consoleTable(scenarios)}\n\n`);
  progress(`results: ${written.join(', ')}`);
  if (profileDir !== null) {
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) process.stderr.write(`\n${formatProfile(join(profileDir, file), 20)}\n`);
  }
  return scenarios.some((s) => s.status === 'failed') ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`bench: ${err.message}\n`);
    process.exit(1);
  },
);
