import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ROOT, spawnNode } from '../harness/processes.js';
import { progress } from '../harness/progress.js';
import { atLeast, type Row } from '../harness/report.js';
import type { Scenario, ScenarioOutcome } from './scenario.js';

/**
 * Writer throughput into PostgreSQL is measured by its own program, bench/dist/writer-bench.js,
 * run here as a child when it is built, against the run's Redis and PostgreSQL servers (a --quick
 * run asks it for fewer records). Its result is the JSON file it reports writing (`wrote <file>`),
 * or else a JSON object on the last line of its stdout; `records_per_second` in it is the figure
 * compared with the target.
 */
export const TARGET_RECORDS_PER_S = 40_000;
const SCRIPT = 'bench/dist/writer-bench.js';

const QUICK_RECORDS = '20000';

function resultOf(stdout: string): Record<string, unknown> | null {
  const wrote = /^wrote (\S+\.json)\s*$/m.exec(stdout)?.[1];
  if (wrote !== undefined) {
    try {
      return JSON.parse(readFileSync(isAbsolute(wrote) ? wrote : join(ROOT, wrote), 'utf8')) as Record<string, unknown>;
    } catch {
      // fall through to the last JSON line
    }
  }
  return lastJsonLine(stdout);
}

function lastJsonLine(text: string): Record<string, unknown> | null {
  const lines = text.trim().split('\n').reverse();
  for (const line of lines) {
    try {
      const parsed = JSON.parse(line) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // not the result line
    }
  }
  return null;
}

export const writer: Scenario = {
  name: 'writer',
  title: 'Writer throughput into PostgreSQL',
  async run(ctx): Promise<ScenarioOutcome> {
    if (!existsSync(join(ROOT, SCRIPT))) return { status: 'skipped', note: `${SCRIPT} is not built yet`, errors: 0, rows: [], data: {} };
    const args = ['--redis', ctx.redisUrl, '--database', ctx.options.databaseUrl, ...(ctx.options.quick ? ['--records', QUICK_RECORDS] : [])];
    const child = spawnNode('writer bench', SCRIPT, args, { env: { REDIS_URL: ctx.redisUrl, BENCH_DATABASE_URL: ctx.options.databaseUrl } });
    let stdout = '';
    const relay = (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) progress(`writer: ${line.trim()}`);
    };
    child.process.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      relay(d);
    });
    child.process.stderr?.on('data', relay);
    const code = await new Promise<number | null>((resolve) => child.process.once('exit', resolve));
    const result = resultOf(stdout);
    if (code !== 0 || result === null) throw new Error(`${SCRIPT} exited with ${code}${result === null ? ' and printed no JSON result' : ''}`);
    const perSecond = Number(result.records_per_second ?? result.recordsPerSecond);
    const rows: Row[] = [
      Number.isFinite(perSecond)
        ? {
            figure: 'records written per second',
            gateway: `${Math.round(perSecond).toLocaleString('en-US')} records/s`,
            result: '',
            target: `≥ ${TARGET_RECORDS_PER_S.toLocaleString('en-US')}`,
            verdict: atLeast(perSecond, TARGET_RECORDS_PER_S),
          }
        : { figure: 'writer bench result', result: 'no records_per_second in its output', verdict: 'miss' },
    ];
    return { errors: Number(result.errors ?? 0) || 0, rows, data: result };
  },
};
