import type { Project } from '../api/types.js';

/**
 * How figures and times read on screen. Dates show as `YYYY-MM-DD HH:mm:ss` in local time:
 * sortable at a glance and the same whatever the browser's language.
 */
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatNumber(n: number): string {
  return integer.format(n);
}

const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const cents = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumSignificantDigits: 2, maximumSignificantDigits: 2 });

/**
 * US dollars: cents from a dollar up, two significant digits below (a request often costs a
 * fraction of a cent, which "$0.00" would hide); a dash when the price is unknown.
 */
export function formatCost(usd: number | null): string {
  if (usd === null) return '—';
  if (usd === 0) return '$0.00';
  return usd >= 1 ? dollars.format(usd) : cents.format(usd);
}

/** 950, 12.3k, 4.5M: for axis ticks and tight spots; tables use formatNumber. */
export function formatCompact(n: number): string {
  const abs = Math.abs(n);
  const units: [number, string][] = [
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, suffix] of units) {
    if (abs >= size) {
      const scaled = n / size;
      return `${Math.abs(scaled) >= 100 ? Math.round(scaled) : Number(scaled.toFixed(1))}${suffix}`;
    }
  }
  return String(Math.round(n));
}

const pad = (n: number) => String(n).padStart(2, '0');

export function formatDateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago"; "never" for null. Beside it goes the exact time. */
export function formatRelative(value: string | number | null, now: number): string {
  if (value === null) return 'never';
  const then = new Date(value).getTime();
  if (Number.isNaN(then)) return '—';
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return days === 1 ? '1 day ago' : `${days} days ago`;
}

export function formatLatency(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export type QuotaLevel = 'none' | 'ok' | 'high' | 'exhausted';

export interface QuotaUse {
  /** used / quota, clamped to 0–1 for the bar; null without a quota. */
  fraction: number | null;
  level: QuotaLevel;
  /** The whole statement, for sighted and screen-reader users alike. */
  label: string;
}

/** Where the bar turns amber: early enough to act before requests start failing with 429. */
const HIGH = 0.8;

export function quotaUse(project: Pick<Project, 'quota_tokens' | 'used_tokens'> & Partial<Pick<Project, 'quota_period'>>): QuotaUse {
  const used = project.used_tokens;
  const quota = project.quota_tokens;
  const period = project.quota_period === 'month' ? ' this month' : '';
  if (quota === null) return { fraction: null, level: 'none', label: `${formatNumber(used)} tokens used${period} · unlimited` };
  if (quota === 0) return { fraction: 1, level: 'exhausted', label: `${formatNumber(used)} of 0 tokens${period} · quota exhausted` };
  const ratio = used / quota;
  const percent = ratio > 0 && ratio < 0.01 ? '<1' : String(Math.floor(ratio * 100));
  const level: QuotaLevel = ratio >= 1 ? 'exhausted' : ratio >= HIGH ? 'high' : 'ok';
  const suffix = level === 'exhausted' ? ' · quota exhausted' : '';
  return { fraction: Math.min(1, ratio), level, label: `${formatNumber(used)} of ${formatNumber(quota)} tokens${period} (${percent}%)${suffix}` };
}

/**
 * The quota field: empty means no quota; otherwise a whole number of tokens. Separators people
 * type (1,000,000 or 1 000 000 or 1_000_000) are accepted.
 */
export function parseQuota(text: string): { ok: true; value: number | null } | { ok: false; problem: string } {
  const cleaned = text.trim().replace(/[\s,_]/g, '');
  if (cleaned === '') return { ok: true, value: null };
  if (!/^\d+$/.test(cleaned)) return { ok: false, problem: 'Enter a whole number of tokens, or leave it empty for no quota.' };
  const value = Number(cleaned);
  if (!Number.isSafeInteger(value)) return { ok: false, problem: 'That quota is too large.' };
  return { ok: true, value };
}

/** The first block of a UUID: enough to tell records apart on screen, with the full id in a tooltip. */
export function shortId(id: string | null): string {
  if (id === null) return '—';
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

/**
 * A chart's time tick, in pieces of the page's one date format: the date for day steps, the time
 * of day within a day, both beyond.
 */
export function formatTickTime(ms: number, stepMs: number): string {
  const full = formatDateTime(ms);
  const time = full.slice(11, 16);
  // Day steps, and the midnight tick of shorter steps, name the day; the other ticks its hours.
  return stepMs >= 24 * 60 * 60_000 || time === '00:00' ? full.slice(0, 10) : time;
}

/** A share of a whole as a percentage people read: "<1%" for a sliver, no decimals. */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0 || part <= 0) return '0%';
  const ratio = part / whole;
  return ratio < 0.01 ? '<1%' : `${Math.round(ratio * 100)}%`;
}
