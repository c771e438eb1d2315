import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RedisKeys } from '@gateway/shared';
import { createLogger } from '../src/logger.js';
import { startWriter, type Writer, type WriterOptions } from '../src/writer/start-writer.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import type { Harness } from './harness.js';

/**
 * What the webhook tests share: a real HTTP endpoint on 127.0.0.1 that records every request and
 * answers per path, an in-process writer (the webhook worker runs in it) whose log lines are kept,
 * a signature check written apart from the gateway's, and waits that poll real state.
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How a path answers: a status, or a function of how many times it was called (1-based). */
export type Answer = number | ((call: number) => { status: number; headers?: Record<string, string> });

export interface Receiver {
  base: string;
  received: Received[];
  /** Requests to `path`. */
  at(path: string): Received[];
  answer(path: string, answer: Answer): void;
  /** Requests to `path` are recorded and left unanswered, as by an endpoint that hangs, until release(). */
  hold(path: string): void;
  /** Answers every held request 200 and holds no more. */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, Answer>();
  const calls = new Map<string, number>();
  const holding = new Set<string>();
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const call = (calls.get(path) ?? 0) + 1;
      calls.set(path, call);
      if (holding.has(path)) return void held.push(res);
      const answer = answers.get(path) ?? 200;
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer(call);
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end('answer body that must never be stored');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    at: (path) => received.filter((r) => r.path === path),
    answer: (path, answer) => void answers.set(path, answer),
    hold: (path) => void holding.add(path),
    release() {
      holding.clear();
      for (const res of held.splice(0)) res.writeHead(200).end();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Verifies a delivery as a receiver would, from the Standard Webhooks text alone: HMAC-SHA256,
 * keyed with the base64-decoded secret, of `id.timestamp.body`, compared in constant time.
 */
export function signatureValid(secret: string, request: Received): boolean {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const header = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof header !== 'string') return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest();
  return header.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface TestWriter {
  writer: Writer;
  logs: string[];
  close(): Promise<void>;
}

/** A writer on the harness's database and Redis prefix, logging at trace level (the production logger) into `logs`. */
export async function startWebhookWriter(h: Harness, env: Record<string, string>, options: WriterOptions = {}): Promise<TestWriter> {
  const logs: string[] = [];
  const log = createLogger('trace', 'writer', { write: (line: string) => void logs.push(line) });
  const writer = await startWriter(
    { DATABASE_URL: h.db.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix, WRITER_PORT: '0', LOG_LEVEL: 'trace', ...env },
    { log, ...options },
  );
  return { writer, logs, close: () => writer.close() };
}

/** Polls `probe` until it returns a value that is not undefined; fails with `what` after the deadline. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The harness's webhooks queue, to look at (and promote) its jobs. */
export function webhookJobs(h: Harness): { queue: Queue; close(): Promise<void> } {
  const keys = new RedisKeys(h.prefix);
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(keys.webhooksQueue, { connection, prefix: keys.bullPrefix });
  return {
    queue,
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
