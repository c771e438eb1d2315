import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { connect } from './database.js';
import type { ScenarioResult } from './report.js';
import { markdownTable } from './table.js';

/**
 * Result files: <timestamp>.json for every run, and for a full default run also latest.json and
 * latest.md (the table to paste into the README, with the machine it was measured on, since the
 * figures mean nothing without it).
 */
export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  redis: string | null;
  postgres: string | null;
}

export interface RunResults {
  schema: 1;
  startedAt: string;
  finishedAt: string;
  mode: 'full' | 'quick' | 'remote';
  machine: Machine;
  settings: Record<string, unknown>;
  scenarios: ScenarioResult[];
}

export async function machineInfo(redis: Redis | null, databaseUrl: string | null): Promise<Machine> {
  const list = cpus();
  let redisVersion: string | null = null;
  let postgresVersion: string | null = null;
  if (redis !== null) redisVersion = /redis_version:(\S+)/.exec(await redis.info('server').catch(() => ''))?.[1] ?? null;
  if (databaseUrl !== null) {
    const sql = connect(databaseUrl);
    postgresVersion = await sql<{ v: string }[]>`select current_setting('server_version') as v`.then((r) => r[0]?.v ?? null, () => null);
    await sql.end({ timeout: 1 });
  }
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    redis: redisVersion,
    postgres: postgresVersion,
  };
}

export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
}

function markdown(results: RunResults): string {
  const m = results.machine;
  const settings = results.settings;
  const load = settings.loadAverage as { start: number[]; end: number[] } | undefined;
  const lines = [
    '# Gateway benchmark results',
    '',
    `Measured ${results.startedAt.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM (${m.os}); ` +
      `Node ${m.node}${m.redis ? `, Redis ${m.redis}` : ''}${m.postgres ? `, PostgreSQL ${m.postgres}` : ''}.`,
    '',
    `\`npm run bench\`: ${settings.rounds} interleaved rounds, ${settings.durationS} s saturation windows, ${settings.connections} connections. ` +
      'Every process (load generator, mock provider, pass-through, gateway, Redis) shares the same cores, so the figures that count are ' +
      'the ratios and differences against talking to the provider directly and against the bare pass-through, taken in the same run. ' +
      'How each figure is measured: docs/benchmarks.md.' +
      (load ? ` Load average (1 min) at start ${load.start[0]}, at end ${load.end[0]}.` : ''),
    '',
    markdownTable(results.scenarios),
    '',
  ];
  const failed = results.scenarios.filter((s) => s.status !== 'ok');
  for (const s of failed) lines.push(`- ${s.name}: ${s.status}${s.note ? ` — ${s.note}` : ''}`);
  const errors = results.scenarios.reduce((n, s) => n + s.errors, 0);
  lines.push(`Client-side errors over the run: ${errors}.`, '');
  return lines.join('\n');
}

export function writeResults(dir: string, results: RunResults, latest: boolean, name = timestamp(new Date(results.startedAt))): string[] {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  const written = [join(dir, `${name}.json`)];
  writeFileSync(written[0] as string, json);
  if (latest) {
    writeFileSync(join(dir, 'latest.json'), json);
    writeFileSync(join(dir, 'latest.md'), markdown(results));
    written.push(join(dir, 'latest.json'), join(dir, 'latest.md'));
  }
  return written;
}
