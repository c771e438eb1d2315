import { UsageError } from './cli-errors.js';

/**
 * Times given on the command line: an RFC 3339 / ISO 8601 date or date-time (UTC unless it names
 * a zone), a duration such as `24h` or `7d` counted back from now (forward, for an expiry), or
 * Unix milliseconds as the records carry them.
 */
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const RELATIVE = /^(\d+)([smhdw])$/;
const ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseInstant(text: string, flag: string, now: number, direction: 'ago' | 'ahead' = 'ago'): number {
  const trimmed = text.trim();
  const relative = RELATIVE.exec(trimmed);
  if (relative !== null) {
    const span = Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
    return direction === 'ago' ? now - span : now + span;
  }
  if (/^\d{10,}$/.test(trimmed)) return Number(trimmed);
  const iso = ISO.exec(trimmed);
  if (iso !== null) {
    const [, date, time, zone] = iso;
    const ms = Date.parse(time === undefined ? `${date}T00:00:00Z` : `${date}T${time}${normaliseZone(zone)}`);
    if (!Number.isNaN(ms) && ms >= 0) return ms;
  }
  const example = direction === 'ago' ? '24h, 7d: that long ago' : '30d, 12w: that long from now';
  throw new UsageError(`--${flag}: "${text}" is not a time; give an ISO date (2026-03-01, 2026-03-01T12:00:00Z), a duration (${example}) or Unix milliseconds`);
}

function normaliseZone(zone: string | undefined): string {
  if (zone === undefined) return 'Z';
  if (zone.toUpperCase() === 'Z') return 'Z';
  return zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
}
