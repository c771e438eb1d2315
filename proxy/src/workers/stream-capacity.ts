import { readFileSync } from 'node:fs';

/**
 * How many concurrent streams this process can hold, from its open-files limit: each stream holds
 * two sockets (the client's and the provider's). Node raises the soft limit to the hard one when it
 * starts, so the figure read here is already the most the process can get without privileges;
 * what is left to do is say it, so an operator sees a low limit at start rather than as refused
 * connections under load.
 */
export interface StreamCapacity {
  /** The soft open-files limit; null where it cannot be read (not Linux). */
  openFiles: number | null;
  /** Streams the process can hold at once, all workers together; null when unknown. */
  streams: number | null;
}

/** Descriptors the process needs besides streams: Redis, listeners, stdio, epoll, log files… */
const SPARE_FDS = 128;
/** Below this many streams the limit is worth a warning. */
export const LOW_STREAM_CAPACITY = 10_000;

export function parseOpenFilesLimit(limits: string): number | null {
  const line = limits.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === undefined) return null;
  if (soft === 'unlimited') return Number.POSITIVE_INFINITY;
  const n = Number(soft);
  return Number.isInteger(n) && n > 0 ? n : null;
}

export function streamCapacity(limitsText?: string): StreamCapacity {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return { openFiles: null, streams: null };
    }
  }
  const openFiles = parseOpenFilesLimit(text);
  if (openFiles === null) return { openFiles: null, streams: null };
  return { openFiles, streams: Math.max(0, Math.floor((openFiles - SPARE_FDS) / 2)) };
}
