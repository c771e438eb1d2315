/**
 * Progress goes to stderr so that stdout carries only the result table (and can be piped); each
 * line is stamped with the time since the run began, which is what a reader watching a long run
 * wants to know.
 */
const started = process.hrtime.bigint();
let quiet = false;

export function setQuiet(value: boolean): void {
  quiet = value;
}

export function progress(message: string): void {
  if (quiet) return;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const mm = Math.floor(seconds / 60);
  const ss = (seconds % 60).toFixed(1).padStart(4, '0');
  process.stderr.write(`[bench ${String(mm).padStart(2, '0')}:${ss}] ${message}\n`);
}

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
