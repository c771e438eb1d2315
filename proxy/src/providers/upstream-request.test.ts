import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancel } from './cancel.js';
import { UpstreamAborted, UpstreamResponse } from './upstream-request.js';

let server: Server;
let pool: Pool;
let closedEarly = 0;
const big = Buffer.alloc(1024 * 1024, 'x');

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(big);
    } else if (req.url === '/slow') {
      res.writeHead(200);
      let n = 0;
      const tick = setInterval(() => {
        res.write(`chunk-${n++};`);
        if (n === 5) {
          clearInterval(tick);
          res.end();
        }
      }, 10);
      res.on('close', () => clearInterval(tick));
    } else if (req.url === '/hang') {
      res.writeHead(200);
      res.write('partial');
    } else {
      // An error page that never ends: reading its start must not wait for the rest.
      res.writeHead(429, { 'retry-after': '9' });
      res.write(big);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 4 });
});

afterAll(async () => {
  await pool.close();
  server.closeAllConnections();
  server.close();
});

const post = (path: string, cancel = new Cancel()) => UpstreamResponse.post(pool, path, { 'content-type': 'application/json' }, Buffer.from('{}'), cancel);

describe('UpstreamResponse', () => {
  it('collects a whole answer into one Buffer and reads headers on demand', async () => {
    const res = await post('/big');
    expect(res.status).toBe(200);
    expect(res.header('x-upstream')).toBe('yes');
    expect(res.header('missing')).toBeUndefined();
    expect((await res.body()).equals(big)).toBe(true);
  });

  it('hands a stream over chunk by chunk, in order, to a slow consumer', async () => {
    const res = await post('/slow');
    let text = '';
    for await (const chunk of res.stream()) {
      text += chunk.toString();
      await sleep(15);
    }
    expect(text).toBe('chunk-0;chunk-1;chunk-2;chunk-3;chunk-4;');
  });

  it('drops the rest of a body it was released from, without giving the connection up', async () => {
    const before = closedEarly;
    let settled = 0;
    const res = await UpstreamResponse.post(pool, '/slow', { 'content-type': 'application/json' }, Buffer.from('{}'), new Cancel(), () => settled++);
    const first = await res.stream().next();
    expect(first.value?.toString()).toMatch(/^chunk-0;/);
    res.release();
    await expect.poll(() => settled).toBe(1);
    expect(closedEarly).toBe(before);
  });

  it('reads only the start of an error body and gives the connection up', async () => {
    const before = closedEarly;
    const res = await post('/error');
    expect(res.status).toBe(429);
    expect(res.header('retry-after')).toBe('9');
    expect((await res.body(100)).length).toBe(100);
    res.destroy();
    await expect.poll(() => closedEarly).toBeGreaterThan(before);
  });

  it('stops a call in flight when cancelled, and refuses one cancelled before it starts', async () => {
    const cancel = new Cancel();
    const res = await post('/hang', cancel);
    const reading = res.body();
    cancel.abort();
    await expect(reading).rejects.toBeInstanceOf(UpstreamAborted);
    const done = new Cancel();
    done.abort();
    await expect(post('/big', done)).rejects.toBeInstanceOf(UpstreamAborted);
  });
});
