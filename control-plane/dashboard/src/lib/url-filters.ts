import { fromLocalInputValue, isRangePreset, presetChoice, toLocalInputValue, type RangeChoice, type RangePreset } from './record-query.js';

/**
 * Filters live in the address (`/usage?project=…&range=7d&model=gpt-4o`), so a view can be
 * bookmarked, shared and restored by reload, Back and Forward. Each page owns its parameters and
 * leaves the others (`project`) alone. A preset range is stored by name and slides with the clock;
 * a custom one as two UTC minutes, the same instants for whoever opens the link, in any zone.
 */
export type Params = Record<string, string | undefined>;

/** `2026-11-23T13:05Z`: a minute in UTC, as short as ISO 8601 allows. */
export function toUrlTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

export function fromUrlTime(text: string | null): number | undefined {
  if (text === null || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The range a query names; a missing or unreadable one is the page's default preset. */
export function rangeFromQuery(query: URLSearchParams, now: number, fallback: Exclude<RangePreset, 'custom'>): RangeChoice {
  const preset = query.get('range');
  if (preset === 'custom') {
    const from = fromUrlTime(query.get('from'));
    const to = fromUrlTime(query.get('to'));
    if (from !== undefined && to !== undefined && from < to) return { preset: 'custom', from: toLocalInputValue(from), to: toLocalInputValue(to) };
    return presetChoice(fallback, now);
  }
  return presetChoice(isRangePreset(preset) && preset !== 'custom' ? preset : fallback, now);
}

/** The parameters of a range; the default preset is left out to keep addresses short. */
export function rangeToParams(choice: RangeChoice, fallback: RangePreset): Params {
  if (choice.preset !== 'custom') return { range: choice.preset === fallback ? undefined : choice.preset, from: undefined, to: undefined };
  const from = fromLocalInputValue(choice.from);
  const to = fromLocalInputValue(choice.to);
  return { range: 'custom', from: from === undefined ? undefined : toUrlTime(from), to: to === undefined ? undefined : toUrlTime(to) };
}

/** `path` with `params` set (undefined or empty: removed) and every other parameter of `query` kept. */
export function withParams(path: string, query: URLSearchParams, params: Params): string {
  const next = new URLSearchParams(query);
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === '') next.delete(name);
    else next.set(name, value);
  }
  const text = next.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** One of `choices`, or '' (any) for a missing or unknown value. */
export function choiceParam<T extends string>(query: URLSearchParams, name: string, choices: readonly T[]): T | '' {
  const value = query.get(name);
  return value !== null && (choices as readonly string[]).includes(value) ? (value as T) : '';
}

/** Free text, trimmed and bounded as the API bounds its filters. */
export function textParam(query: URLSearchParams, name: string, max = 200): string {
  return (query.get(name) ?? '').trim().slice(0, max);
}
