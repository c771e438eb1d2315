/**
 * The request's `Cache-Control` as the response cache reads it (DESIGN §7): `no-store` neither
 * reads nor writes, `no-cache` writes without reading, `max-age=<s>` accepts only an entry no
 * older. Other directives are ignored; the most restrictive of several wins.
 */
export interface CacheDirectives {
  read: boolean;
  write: boolean;
  /** Oldest entry accepted, in ms; null: any live entry. */
  maxAgeMs: number | null;
}

const DEFAULT: CacheDirectives = Object.freeze({ read: true, write: true, maxAgeMs: null });

export function cacheDirectives(header: string): CacheDirectives {
  if (header === '') return DEFAULT;
  let read = true;
  let write = true;
  let maxAgeMs: number | null = null;
  for (const part of header.toLowerCase().split(',')) {
    const directive = part.trim();
    if (directive === 'no-store') {
      read = false;
      write = false;
    } else if (directive === 'no-cache') read = false;
    else if (directive.startsWith('max-age=')) {
      const seconds = Number(directive.slice(8).replace(/^"|"$/g, ''));
      if (Number.isInteger(seconds) && seconds >= 0) maxAgeMs = Math.min(maxAgeMs ?? Infinity, seconds * 1000);
    }
  }
  return { read, write, maxAgeMs };
}
