import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientStack } from './client-stack.js';
import { UpstreamResponse } from './upstream-request.js';
import { Cancel } from './cancel.js';

/** A provider that answers each POST once told to, and counts the connections it was opened. */
async function provider(): Promise<{ origin: string; connections: Socket[]; held: ServerResponse[]; server: Server }> {
  const connections: Socket[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['x-hold'] === '1') held.push(res);
      else res.end('ok');
    });
  });
  server.on('connection', (socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections, held, server };
}

const opened: { stack: ClientStack; server: Server }[] = [];
afterEach(async () => {
  for (const { stack, server } of opened.splice(0)) {
    await stack.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function post(stack: ClientStack, hold = false): Promise<UpstreamResponse> {
  return UpstreamResponse.post(stack, '/', { 'content-type': 'text/plain', ...(hold ? { 'x-hold': '1' } : {}) }, Buffer.from('hi'), new Cancel());
}

describe('ClientStack', () => {
  it('opens one connection per request in flight, and reuses a freed one', async () => {
    const p = await provider();
    const stack = new ClientStack(p.origin, { keepAliveTimeout: 30_000 });
    opened.push({ stack, server: p.server });
    const waiting = Array.from({ length: 50 }, () => post(stack, true));
    while (p.held.length < 50) await new Promise((r) => setTimeout(r, 10));
    expect(p.connections).toHaveLength(50);
    for (const res of p.held.splice(0)) res.end('done');
    for (const res of await Promise.all(waiting)) expect((await res.body()).toString()).toBe('done');
    // Sequential requests after that take an idle connection: at most one more is opened (a
    // request sent in the same tick as the previous answer ends, before its connection drained).
    for (let i = 0; i < 20; i++) expect((await (await post(stack)).body()).toString()).toBe('ok');
    expect(p.connections.length).toBeLessThanOrEqual(51);
    expect(stack.size).toBe(p.connections.length);
  });

  it('forgets a connection the provider closed while it was idle, and opens a new one', async () => {
    const p = await provider();
    const stack = new ClientStack(p.origin, { keepAliveTimeout: 30_000 });
    opened.push({ stack, server: p.server });
    expect((await (await post(stack)).body()).toString()).toBe('ok');
    p.connections[0]!.destroy();
    while (stack.size > 0) await new Promise((r) => setTimeout(r, 10));
    expect((await (await post(stack)).body()).toString()).toBe('ok');
    expect(p.connections).toHaveLength(2);
    expect(stack.size).toBe(1);
  });
});
