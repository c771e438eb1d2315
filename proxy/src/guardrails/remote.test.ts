import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Resolver, WebhookGuardrail } from '@gateway/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callWebhook, type RemoteFacts } from './remote.js';
import { WebhookAgent } from './webhook-agent.js';

/**
 * A webhook guard's address is checked when it is called, not only when it was saved: a host
 * that is, or resolves at call time to, a loopback, private or link-local address is refused
 * (the guard `failed`, its failure_mode decides), and the local service is never reached.
 */
const SECRET = 'whsec_' + Buffer.from('webhook-guard-unit-test-secret!!').toString('base64');
const facts: RemoteFacts = { stage: 'input', texts: ['hello'], projectId: 'p1', keyId: 'k1', model: 'm' };

let server: Server;
let port = 0;
const calls: { url: string | undefined; signed: boolean }[] = [];
let connections = 0;
let answer: (res: ServerResponse) => void = (res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ action: 'allow' }));
};

async function bodyOf(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const part of req) raw += part;
  return raw;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    await bodyOf(req);
    calls.push({ url: req.url, signed: /^v1,/.test(String(req.headers['webhook-signature'])) });
    answer(res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const agents: WebhookAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

function agent(options: ConstructorParameters<typeof WebhookAgent>[0]): WebhookAgent {
  const made = new WebhookAgent(options);
  agents.push(made);
  return made;
}

function guard(url: string): WebhookGuardrail {
  return { id: 'hook', stage: 'input', action: 'block', type: 'webhook', url, secret: SECRET, timeout_ms: 2000, failure_mode: 'closed' };
}

const fixed =
  (addresses: string[], asked: string[] = []): Resolver =>
  async (host) => {
    asked.push(host);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('webhook guard calls', () => {
  it('refuses an address literal that is not public, without connecting', async () => {
    const strict = agent({ allowPrivate: false });
    const before = calls.length;
    for (const host of ['127.0.0.1', '[::1]', '169.254.169.254', '10.0.0.7', '[::ffff:127.0.0.1]']) {
      expect(await callWebhook(guard(`http://${host}:${port}/guard`), facts, strict), host).toEqual({ action: 'failed' });
    }
    expect(calls.length).toBe(before);
  });

  it('refuses a name that resolves to a loopback address when the guard is called', async () => {
    const before = calls.length;
    // The system's resolver: localhost is 127.0.0.1 (or ::1).
    expect(await callWebhook(guard(`http://localhost:${port}/guard`), facts, agent({ allowPrivate: false }))).toEqual({ action: 'failed' });
    // A name that was public when the guard was saved and points inside now (DNS rebinding).
    const asked: string[] = [];
    const rebound = agent({ allowPrivate: false, resolve: fixed(['127.0.0.1'], asked) });
    expect(await callWebhook(guard(`http://guard.example.com:${port}/guard`), facts, rebound)).toEqual({ action: 'failed' });
    expect(asked).toEqual(['guard.example.com']);
    // One private address among public ones refuses the whole name.
    const mixed = agent({ allowPrivate: false, resolve: fixed(['93.184.215.14', '192.168.1.10']) });
    expect(await callWebhook(guard(`http://guard.example.com:${port}/guard`), facts, mixed)).toEqual({ action: 'failed' });
    expect(calls.length).toBe(before);
  });

  it('calls a local guard when private addresses are allowed, signed, over one kept-alive connection', async () => {
    const open = agent({ allowPrivate: true });
    const before = calls.length;
    const opened = connections;
    expect(await callWebhook(guard(`http://127.0.0.1:${port}/guard`), facts, open)).toEqual({ action: 'allow' });
    // The connection goes back to the agent once the answer has ended, a moment after it was read.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await callWebhook(guard(`http://127.0.0.1:${port}/guard`), facts, open)).toEqual({ action: 'allow' });
    expect(calls.slice(before)).toEqual([
      { url: '/guard', signed: true },
      { url: '/guard', signed: true },
    ]);
    expect(connections - opened).toBe(1);
  });

  it('fails on a redirect, which is never followed', async () => {
    answer = (res) => {
      res.statusCode = 302;
      res.setHeader('location', 'http://169.254.169.254/latest/meta-data');
      res.end();
    };
    try {
      expect(await callWebhook(guard(`http://127.0.0.1:${port}/guard`), facts, agent({ allowPrivate: true }))).toEqual({ action: 'failed' });
    } finally {
      answer = (res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ action: 'allow' }));
      };
    }
  });
});
