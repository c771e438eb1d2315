/**
 * What a scenario hands back: structured numbers for the JSON file, and rows for the table that
 * goes on the console and into the Markdown file. Each row is one figure; `direct`, `bare` and
 * `gateway` hold that figure per target where it applies, `result` the comparison that matters.
 */
export type Verdict = 'pass' | 'miss' | 'info';

export interface Row {
  figure: string;
  direct?: string;
  bare?: string;
  gateway?: string;
  result: string;
  target?: string;
  verdict: Verdict;
}

export interface ScenarioResult {
  name: string;
  title: string;
  status: 'ok' | 'skipped' | 'failed';
  note?: string;
  durationS: number;
  /** Failed or unexpected client requests (connection errors, wrong status, cut streams). */
  errors: number;
  rows: Row[];
  data: Record<string, unknown>;
}

/** A figure with a lower bound (throughput ratios). */
export function atLeast(value: number, min: number): Verdict {
  return Number.isFinite(value) && value >= min ? 'pass' : 'miss';
}

/** A figure with an upper bound (latencies, memory). */
export function atMost(value: number, max: number): Verdict {
  return Number.isFinite(value) && value <= max ? 'pass' : 'miss';
}

export function us(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${Math.round(value).toLocaleString('en-US')} µs`;
}

export function ms(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value.toFixed(digits)} ms`;
}

export function rps(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${Math.round(value).toLocaleString('en-US')} req/s`;
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

export function signedUs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const rounded = Math.round(value);
  return `${rounded >= 0 ? '+' : '−'}${Math.abs(rounded).toLocaleString('en-US')} µs`;
}

export function kib(bytes: number): string {
  return Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : 'n/a';
}
