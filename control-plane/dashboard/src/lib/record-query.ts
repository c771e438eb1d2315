/**
 * Query strings of the record lists and the date inputs that feed them. Empty filters are left
 * out rather than sent blank: the API validates every parameter and would refuse `model=`.
 */
export type QueryValues = Record<string, string | number | boolean | null | undefined>;

export function toQueryString(values: QueryValues): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    const text = String(value).trim();
    if (text === '') continue;
    params.set(name, text);
  }
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DDTHH:mm` in local time, the value format of `<input type="datetime-local">`. */
export function toLocalInputValue(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The inverse, as Unix ms; undefined for an empty or malformed value. A space may stand for the T. */
export function fromLocalInputValue(value: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, Number.isNaN(s) ? 0 : s);
  // new Date rolls 2025-02-31 over into March: a value that does not read back was not a date.
  if (date.getMonth() !== mo - 1 || date.getDate() !== d) return undefined;
  return date.getTime();
}

export interface TimeRange {
  from: number;
  to: number;
}

/** The last `spanMs` up to now, rounded out to whole minutes as the inputs show them. */
export function lastSpan(spanMs: number, now: number): TimeRange {
  const minute = 60_000;
  const to = Math.ceil((now + 1) / minute) * minute;
  return { from: to - Math.ceil(spanMs / minute) * minute, to };
}

/** Problems with a range, worded for the field they concern; null when it is fine. */
export function rangeProblem(range: { from?: number | undefined; to?: number | undefined }): string | null {
  if (range.from !== undefined && range.to !== undefined && range.from >= range.to) return '"From" must be before "To".';
  return null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value.trim());
}

/** The ranges offered in one click; "custom" keeps what was typed into From and To. */
export const RANGE_PRESETS = {
  '1h': { label: 'Last hour', spanMs: 60 * 60_000 },
  '24h': { label: 'Last 24 hours', spanMs: 24 * 60 * 60_000 },
  '7d': { label: 'Last 7 days', spanMs: 7 * 24 * 60 * 60_000 },
  '30d': { label: 'Last 30 days', spanMs: 30 * 24 * 60 * 60_000 },
} as const;

/** The calendar month so far, in local time: a span that grows, so it is not in RANGE_PRESETS. */
export const MONTH_PRESET = { key: 'month', label: 'This month' } as const;

export type RangePreset = keyof typeof RANGE_PRESETS | 'month' | 'custom';

export function isRangePreset(value: string | null): value is RangePreset {
  return value !== null && (value in RANGE_PRESETS || value === 'month' || value === 'custom');
}

/** From local midnight on the 1st of this month to now (the next whole minute, as lastSpan). */
export function thisMonth(now: number): TimeRange {
  const d = new Date(now);
  return { from: new Date(d.getFullYear(), d.getMonth(), 1).getTime(), to: lastSpan(0, now).to };
}

export interface RangeChoice {
  preset: RangePreset;
  /** The From and To fields, as typed (used when preset is custom). */
  from: string;
  to: string;
}

/** The bounds a choice means right now: a preset slides with the clock, so Refresh shows new records. */
export function resolveRange(choice: RangeChoice, now: number): TimeRange | { problem: string } {
  if (choice.preset === 'month') return thisMonth(now);
  if (choice.preset !== 'custom') return lastSpan(RANGE_PRESETS[choice.preset].spanMs, now);
  const from = fromLocalInputValue(choice.from);
  const to = fromLocalInputValue(choice.to);
  if (from === undefined) return { problem: 'Enter a valid "From" date and time.' };
  if (to === undefined) return { problem: 'Enter a valid "To" date and time.' };
  const problem = rangeProblem({ from, to });
  return problem === null ? { from, to } : { problem };
}

/** A choice for a preset, with From and To filled in so switching to custom starts from it. */
export function presetChoice(preset: Exclude<RangePreset, 'custom'>, now: number): RangeChoice {
  const range = preset === 'month' ? thisMonth(now) : lastSpan(RANGE_PRESETS[preset].spanMs, now);
  return { preset, from: toLocalInputValue(range.from), to: toLocalInputValue(range.to) };
}
