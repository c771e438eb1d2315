import type { HttpResponse } from './uws.js';

/**
 * Collects a request body, stopping as soon as it passes `limit` bytes (the rest is never
 * buffered). uWebSockets.js reuses the chunk's memory after the callback, hence the copies.
 */
export function readBody(res: HttpResponse, limit: number, onBody: (body: Buffer) => void, onTooLarge: () => void): void {
  let parts: Buffer[] | null = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (parts === null) return;
    size += chunk.byteLength;
    if (size > limit) {
      parts = null;
      onTooLarge();
      return;
    }
    if (isLast) {
      const body = parts.length === 0 ? copied(chunk) : Buffer.concat([...parts, new Uint8Array(chunk)]);
      parts = null;
      onBody(body);
      return;
    }
    parts.push(copied(chunk));
  });
}

/**
 * A chunk copied once; a small one lands in Buffer's shared pool, as any small Buffer does (a
 * sliced ArrayBuffer would cost an allocation of its own and a second copy).
 */
function copied(chunk: ArrayBuffer): Buffer {
  return Buffer.from(new Uint8Array(chunk));
}
