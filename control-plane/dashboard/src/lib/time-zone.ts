/**
 * The browser's time zone in words, shown wherever times are: every time on the pages is local,
 * and a shared link or a screenshot is read by people elsewhere. "UTC+01:00 (Europe/Berlin)".
 */
export function utcOffset(now: number): string {
  const minutes = -new Date(now).getTimezoneOffset();
  const sign = minutes < 0 ? '−' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export function describeTimeZone(now: number): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const offset = utcOffset(now);
  return zone === undefined || zone === 'UTC' || zone === 'Etc/UTC' ? offset : `${offset} (${zone})`;
}

/** The local offset in ms at `at`: what day and hour buckets are shifted by to start at local midnight. */
export function localOffsetMs(at: number): number {
  return -new Date(at).getTimezoneOffset() * 60_000;
}
