import { connect, type Socket } from 'node:net';
import { CHAT_PATH } from './http.js';

/**
 * Streams held open by plain sockets: a raw HTTP/1.1 request, then nothing but waiting. At 10k
 * streams an HTTP client's per-request bookkeeping would cost the bench more than the target, and
 * only the target's memory is of interest.
 */
export interface HeldStream {
  socket: Socket;
  /** Request written → its first SSE event in, µs. */
  firstEventUs: number;
  close(): void;
}

export function openHeldStream(origin: string, headers: Record<string, string>, body: string, timeoutMs = 30_000): Promise<HeldStream> {
  const url = new URL(origin);
  const payload = Buffer.from(body);
  const head =
    `POST ${CHAT_PATH} HTTP/1.1\r\nhost: ${url.host}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `content-length: ${payload.length}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let sentAt = 0n;
    let seen = '';
    const timer = setTimeout(() => fail(new Error('no first event in time')), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.on('data', (d: Buffer) => {
      seen += d.toString('latin1');
      if (!seen.startsWith('HTTP/1.1 200')) return fail(new Error(`unexpected answer: ${seen.split('\r\n')[0]}`));
      if (seen.includes('data: ')) {
        const firstEventUs = Number(process.hrtime.bigint() - sentAt) / 1000;
        clearTimeout(timer);
        socket.off('error', fail);
        // Later errors (the target closing at the end) are expected; only the first event mattered.
        socket.on('error', () => {});
        seen = '';
        socket.removeAllListeners('data');
        socket.on('data', () => {});
        resolve({ socket, firstEventUs, close: () => socket.destroy() });
      }
    });
    socket.setNoDelay(true);
    socket.once('connect', () => {
      sentAt = process.hrtime.bigint();
      socket.write(head);
      socket.write(payload);
    });
  });
}

/** Opens streams until `count` are held, `parallel` connection attempts at a time. */
export async function holdStreams(held: HeldStream[], count: number, parallel: number, open: () => Promise<HeldStream>): Promise<number> {
  let failures = 0;
  while (held.length < count) {
    const batch = Math.min(parallel, count - held.length);
    const settled = await Promise.allSettled(Array.from({ length: batch }, open));
    for (const s of settled) {
      if (s.status === 'fulfilled') held.push(s.value);
      else failures++;
    }
    if (failures > count / 10 + 10) throw new Error(`too many streams failed to open (${failures}); last: ${(settled.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined)?.reason}`);
  }
  return failures;
}
