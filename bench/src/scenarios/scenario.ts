import type { RunContext } from '../harness/context.js';
import type { Row } from '../harness/report.js';

/** One entry of the registry: a named measurement of the local stack. */
export interface Scenario {
  name: string;
  title: string;
  run(ctx: RunContext): Promise<ScenarioOutcome>;
}

export interface ScenarioOutcome {
  status?: 'ok' | 'skipped';
  note?: string;
  errors: number;
  rows: Row[];
  data: Record<string, unknown>;
}

/** Sizes that differ between a measurement and a --quick smoke run. */
export function sized<T>(ctx: RunContext, full: T, quick: T): T {
  return ctx.options.quick ? quick : full;
}
