import type { ApiKey } from '../api/types.js';

/**
 * A new key's expiry as chosen in the form: a preset number of days, a date of the user's own
 * (the key works through that whole day, local time), or never.
 */
export const EXPIRY_CHOICES = [
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'custom', label: 'On a date…' },
  { value: 'never', label: 'Never' },
] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number]['value'];

const DAY = 86_400_000;

export function expiryFrom(choice: ExpiryChoice, customDate: string, now: Date): { ok: true; value: string | null } | { ok: false; problem: string } {
  if (choice === 'never') return { ok: true, value: null };
  if (choice !== 'custom') return { ok: true, value: new Date(now.getTime() + Number(choice) * DAY).toISOString() };
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(customDate);
  if (match === null) return { ok: false, problem: 'Pick the last day the key should work.' };
  const end = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59, 999);
  if (Number.isNaN(end.getTime()) || end.getDate() !== Number(match[3])) return { ok: false, problem: 'That is not a date.' };
  if (end.getTime() <= now.getTime()) return { ok: false, problem: 'Pick today or a later day.' };
  return { ok: true, value: end.toISOString() };
}

/** `YYYY-MM-DD` of a local date: the `min` of the date field. */
export function localDateInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Within this long of its expiry a key is flagged, so it can be rotated before clients fail. */
export const EXPIRING_SOON_MS = 7 * DAY;

export type KeyState = 'live' | 'expiring' | 'expired' | 'deleted';

export function keyState(key: Pick<ApiKey, 'expires_at'> & Partial<Pick<ApiKey, 'deleted_at'>>, now: number): KeyState {
  if (key.deleted_at) return 'deleted';
  if (key.expires_at === null) return 'live';
  const at = new Date(key.expires_at).getTime();
  if (at <= now) return 'expired';
  return at - now <= EXPIRING_SOON_MS ? 'expiring' : 'live';
}
