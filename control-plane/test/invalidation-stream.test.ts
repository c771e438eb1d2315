import { Agent, fetch as streamFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInvalidation, type Invalidation } from '@gateway/shared';
import { startHarness, type Harness } from './harness.js';
import { eventually } from '../../test-support/processes.js';

/**
 * The invalidation log and its internal stream: every deletion is in the log with the deleting
 * transaction, the stream replays from `after` and then pushes entries as they commit, on any
 * control plane of the deployment, and only for holders of the internal token.
 */
const TOKEN = 'internal-token-for-the-stream-test';
let a: Harness;
let b: Harness;
// Streams on their own connection pool, destroyed before the control planes close (an aborted
// stream's pool may hold a fresh, request-less connection the server would wait for).
const agent = new Agent();

beforeAll(async () => {
  a = await startHarness('invstream', { env: { INTERNAL_TOKEN: TOKEN } });
  // A second control plane on the same database and Redis prefix: a replica.
  b = await startHarness('invstream', { db: a.db, env: { INTERNAL_TOKEN: TOKEN, REDIS_PREFIX: a.prefix } });
});

afterAll(async () => {
  await agent.destroy();
  await b?.close();
  await a?.close();
});

interface Stream {
  next(match: (msg: Invalidation) => boolean, what: string): Promise<Invalidation>;
  close(): void;
}

async function openStream(base: string, after?: number): Promise<Stream> {
  const controller = new AbortController();
  const res = await streamFetch(`${base}/internal/v1/invalidations${after === undefined ? '' : `?after=${after}`}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: controller.signal,
    dispatcher: agent,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/x-ndjson');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  const seen: Invalidation[] = [];
  return {
    async next(match, what) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = seen.findIndex(match);
        if (found >= 0) return seen.splice(0, found + 1).pop()!;
        if (Date.now() > deadline) throw new Error(`never streamed: ${what}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${what}`);
        pending += decoder.decode(value, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) if (line !== '') seen.push(decodeInvalidation(line));
      }
    },
    close: () => controller.abort(),
  };
}

async function newKey(h: Harness, projectId: string): Promise<{ id: string; hash: string }> {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'k' } });
  expect(res.status).toBe(201);
  const [row] = await h.sql<{ key_hash: string }[]>`select key_hash from api_keys where id = ${res.body.id}`;
  return { id: res.body.id, hash: row!.key_hash };
}

describe('GET /internal/v1/invalidations', () => {
  it('refuses callers without the internal token, and malformed positions', async () => {
    const none = await a.api('GET', '/internal/v1/invalidations');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    // A management-API token is not the internal token.
    expect((await a.api('GET', '/internal/v1/invalidations', { token: a.adminToken })).status).toBe(401);
    expect((await a.api('GET', '/internal/v1/invalidations', { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    const bad = await a.api('GET', '/internal/v1/invalidations?after=-1', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'after' });
    // Internal: not in the public OpenAPI document.
    expect((await a.api('GET', '/openapi.json')).text).not.toContain('/internal/');
  });

  it('is refused by a control plane that has no internal token', async () => {
    const lone = await startHarness('invstreamnotoken');
    try {
      expect((await lone.api('GET', '/internal/v1/invalidations', { headers: { authorization: 'Bearer anything-at-all-here' } })).status).toBe(401);
    } finally {
      await lone.close();
    }
  });

  it('pushes each deletion as it commits, on every replica, and replays from a position', async () => {
    const project = await a.api('POST', '/v1/projects', { token: a.adminToken, body: { name: 'streamed' } });
    const key = await newKey(a, project.body.id);
    const onA = await openStream(a.base);
    const onB = await openStream(b.base);
    try {
      const head = (await onA.next((m) => m.kind === 'stream.alive', 'the opening heartbeat')).id!;
      expect(typeof head).toBe('number');

      expect((await a.api('DELETE', `/v1/projects/${project.body.id}/keys/${key.id}`, { token: a.adminToken })).status).toBe(204);
      const isKey = (m: Invalidation) => m.kind === 'key.deleted' && m.key_id === key.id;
      const fromA = await onA.next(isKey, 'the key deletion on the deleting control plane');
      // The replica hears it through PostgreSQL (NOTIFY), not through the other process.
      const fromB = await onB.next(isKey, 'the key deletion on the replica');
      expect(fromA).toMatchObject({ key_hash: key.hash, project_id: project.body.id });
      expect(fromB.id).toBe(fromA.id);
      expect(fromA.id!).toBeGreaterThan(head);
      // Durable: the entry is in the log with the deletion.
      const [row] = await a.sql<{ kind: string; key_id: string }[]>`select kind, key_id from invalidation_log where id = ${fromA.id!}`;
      expect(row).toEqual({ kind: 'key.deleted', key_id: key.id });

      expect((await b.api('DELETE', `/v1/projects/${project.body.id}`, { token: b.adminToken })).status).toBe(204);
      const projectGone = await onA.next((m) => m.kind === 'project.deleted', 'the project deletion');
      expect(projectGone).toMatchObject({ project_id: project.body.id, key_hash: null });

      // A proxy that saw `head` and reconnects gets what it missed, in order, then goes on live.
      const resumed = await openStream(b.base, head);
      try {
        expect((await resumed.next((m) => m.kind !== 'stream.alive', 'the first replayed entry')).id).toBe(fromA.id);
        expect((await resumed.next((m) => m.kind !== 'stream.alive', 'the second replayed entry')).id).toBe(projectGone.id);
        const caughtUp = await resumed.next((m) => m.kind === 'stream.alive', 'a heartbeat after the replay');
        expect(caughtUp.id).toBe(projectGone.id);
      } finally {
        resumed.close();
      }
    } finally {
      onA.close();
      onB.close();
    }
  });

  it('finds an entry whose notification was missed, by polling', async () => {
    const stream = await openStream(b.base);
    try {
      await stream.next((m) => m.kind === 'stream.alive', 'the opening heartbeat');
      // Appended without NOTIFY: as if the listening connection was down when it committed.
      const [row] = await a.sql<{ id: string }[]>`
        insert into invalidation_log (kind, key_hash, key_id, project_id)
        values ('project.deleted', null, null, gen_random_uuid()) returning id::text`;
      expect((await stream.next((m) => m.kind === 'project.deleted', 'the unannounced entry')).id).toBe(Number(row!.id));
    } finally {
      stream.close();
    }
  });

  it('tells a proxy whose position is gone (pruned, or ahead of the log) to start afresh', async () => {
    const [{ head }] = (await a.sql<{ head: string }[]>`select coalesce(max(id), 0)::text as head from invalidation_log`) as unknown as [{ head: string }];
    const ahead = await openStream(a.base, Number(head) + 1000);
    try {
      expect(await ahead.next((m) => m.kind === 'stream.reset', 'a reset')).toMatchObject({ id: Number(head) });
    } finally {
      ahead.close();
    }
    // Pruning keeps the newest entry; a proxy that saw nothing since before the oldest kept one is reset.
    await a.sql`update invalidation_log set created_at = now() - interval '2 days'`;
    const { pruneInvalidations } = await import('../src/keys/invalidation-log.js');
    expect(await pruneInvalidations(a.cp.ctx.sql)).toBeGreaterThan(0);
    const [{ n }] = (await a.sql<{ n: number }[]>`select count(*)::int as n from invalidation_log`) as unknown as [{ n: number }];
    expect(n).toBe(1);
    const stale = await openStream(a.base, 0);
    try {
      expect((await stale.next((m) => m.kind === 'stream.reset' || m.kind === 'stream.alive', 'the opening line')).kind).toBe('stream.reset');
    } finally {
      stale.close();
    }
  });
});

describe('a stream whose log read fails', () => {
  let c: Harness;
  beforeAll(async () => {
    c = await startHarness('invstream-fail', { env: { INTERNAL_TOKEN: TOKEN }, captureLogs: true });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('stays open and goes on from the same position once the log reads again', async () => {
    const project = await c.api('POST', '/v1/projects', { token: c.adminToken, body: { name: 'held' } });
    const key = await newKey(c, project.body.id);
    const stream = await openStream(c.base);
    try {
      await stream.next((m) => m.kind === 'stream.alive', 'the opening heartbeat');
      // The stream's query fails (as when PostgreSQL drops the connection it runs on) for as
      // long as the table is away; a notification wakes the stream to read it.
      await c.sql`alter table invalidation_log rename to invalidation_log_away`;
      try {
        await c.sql`select pg_notify('gateway_invalidations', '')`;
        await eventually(() => c.logs.some((line) => line.includes('invalidation stream cannot read the log')), 'a failed read of the log');
      } finally {
        await c.sql`alter table invalidation_log_away rename to invalidation_log`;
      }
      await eventually(() => c.logs.some((line) => line.includes('invalidation stream reads the log again')), 'the log read again');
      // The same stream, not a new one, carries the next deletion.
      expect((await c.api('DELETE', `/v1/projects/${project.body.id}/keys/${key.id}`, { token: c.adminToken })).status).toBe(204);
      const deleted = await stream.next((m) => m.kind === 'key.deleted' && m.key_id === key.id, 'the deletion after the failed reads');
      expect(deleted.key_hash).toBe(key.hash);
    } finally {
      stream.close();
    }
  });
});
