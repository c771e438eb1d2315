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
      const body = parts.length === 0 ? Buffer.from(new Uint8Array(chunk).slice()) : Buffer.concat([...parts, Buffer.from(new Uint8Array(chunk))]);
      parts = null;
      onBody(body);
      return;
    }
    parts.push(Buffer.from(new Uint8Array(chunk).slice()));
  });
}
