import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactRowsWriter, decodeRecordBatch, encodeCompactRecordBatch, newRecordId, RECORD_BATCH_VERSION, type AuditEvent, type UsageRecord } from '@gateway/shared';
import type { Db } from '../src/db/connect.js';
import { writeBatch } from '../src/writer/batch-writer.js';
import { addAuditRows, addUsageRows, emptyAuditRows, emptyUsageRows } from '../src/writer/record-rows.js';
import { startHarness, type ApiResponse, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('records');
});
afterAll(async () => h?.close());

type User = Awaited<ReturnType<Harness['createUser']>>;
const T0 = Date.UTC(2026, 0, 1);

interface UsageSeed {
  ts: number;
  project_id: string;
  key_id?: string;
  model?: string;
  provider?: string;
  finish_reason?: string;
  id?: string;
  input?: number;
  output?: number;
  cached?: number;
  cost?: number | null;
  endpoint?: string;
  provider_finish_reason?: string | null;
}

async function insertUsage(rows: UsageSeed[]): Promise<string[]> {
  const full = rows.map((r) => ({
    ts: r.ts,
    id: r.id ?? randomUUID(),
    request_id: `req-${randomUUID()}`,
    project_id: r.project_id,
    key_id: r.key_id ?? randomUUID(),
    model: r.model ?? 'mock-1',
    provider: r.provider ?? 'mock',
    input_tokens: r.input ?? 3,
    output_tokens: r.output ?? 5,
    total_tokens: (r.input ?? 3) + (r.output ?? 5),
    cached_tokens: r.cached ?? 0,
    cost_usd: r.cost ?? null,
    latency_ms: 12,
    finish_reason: r.finish_reason ?? 'stop',
    provider_finish_reason: r.provider_finish_reason ?? null,
    stream: false,
    endpoint: r.endpoint ?? 'chat.completions',
  }));
  await h.sql`insert into usage_records ${h.sql(full)}`;
  return full.map((r) => r.id);
}

interface AuditSeed {
  ts: number;
  project_id: string | null;
  type?: string;
  outcome?: string;
  endpoint?: string | null;
  attempts?: number;
  providers?: string[];
}

async function insertAudit(rows: AuditSeed[]): Promise<string[]> {
  const full = rows.map((r) => ({
    ts: r.ts,
    id: newRecordId(),
    request_id: `req-${randomUUID()}`,
    type: r.type ?? 'gateway.request',
    outcome: r.outcome ?? 'success',
    status: 200,
    project_id: r.project_id,
    endpoint: r.endpoint ?? null,
    attempts: r.attempts ?? 0,
    providers: r.providers ?? [],
    latency_ms: 5,
  }));
  await h.sql`insert into audit_events ${h.sql(full)}`;
  return full.map((r) => r.id);
}

/** Follows next_cursor to the end, calling `between` after every page. */
async function pageThrough(token: string, path: string, between: (page: number) => Promise<void> = async () => {}) {
  const seen: { id: string; timestamp: number }[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: ApiResponse = await h.api('GET', cursor === null ? path : `${path}${sep}cursor=${cursor}`, { token });
    expect(res.status, res.text).toBe(200);
    seen.push(...res.body.data);
    expect(res.body.has_more).toBe(res.body.next_cursor !== null);
    cursor = res.body.next_cursor;
    if (cursor === null) return seen;
    await between(page);
  }
  throw new Error('did not reach the end');
}

function expectStrictOrder(rows: { id: string; timestamp: number }[], order: 'asc' | 'desc') {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1] as { id: string; timestamp: number };
    const b = rows[i] as { id: string; timestamp: number };
    const cmp = a.timestamp !== b.timestamp ? a.timestamp - b.timestamp : a.id < b.id ? -1 : 1;
    expect(order === 'desc' ? cmp > 0 : cmp < 0, `rows ${i - 1} and ${i}`).toBe(true);
  }
}

describe('usage and audit lists', () => {
  let viewer: User;
  let projectA: string;
  let projectB: string;
  let keyA: string;

  beforeAll(async () => {
    viewer = await h.createUser();
    projectA = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'A' } })).body.id;
    projectB = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'B' } })).body.id;
    await h.api('POST', `/v1/projects/${projectA}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } });
    keyA = randomUUID();
    const rows: UsageSeed[] = [];
    for (let i = 0; i < 60; i++) {
      // Pairs of records share a timestamp, so the id has to break ties.
      rows.push({
        ts: T0 + Math.floor(i / 2) * 1000,
        project_id: projectA,
        key_id: i % 3 === 0 ? keyA : undefined,
        model: i % 2 === 0 ? 'gpt-4o-mini' : 'mock-1',
        provider: i % 4 === 0 ? 'openai' : 'mock',
        finish_reason: i % 5 === 0 ? 'max_tokens' : i % 7 === 0 ? 'other' : 'stop',
        provider_finish_reason: i % 5 !== 0 && i % 7 === 0 ? 'pause_turn' : null,
        endpoint: i % 6 === 0 ? 'messages' : 'chat.completions',
        cached: i % 3,
        cost: i % 2 === 0 ? 0.0001 * i : null,
      });
    }
    for (let i = 0; i < 10; i++) rows.push({ ts: T0 + i * 1000 + 500, project_id: projectB });
    await insertUsage(rows);
  });

  it('shape usage records as the API documents them, newest first, 50 by default', async () => {
    const res = await h.api('GET', `/v1/usage?project_id=${projectA}`, { token: viewer.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(50);
    expect(res.body.has_more).toBe(true);
    // The newest pair is i = 58 (cost 0.0058, 58 % 3 = 1 cached token) and i = 59 (no price).
    const [priced] = (await h.sql`select id from usage_records where project_id = ${projectA} and ts = ${T0 + 29_000} and cost_usd is not null`) as unknown as { id: string }[];
    const first = res.body.data[0];
    expect(first).toEqual({
      id: expect.any(String),
      request_id: expect.stringMatching(/^req-/),
      project_id: projectA,
      key_id: expect.any(String),
      timestamp: T0 + 29_000,
      model: expect.any(String),
      provider: expect.any(String),
      tokens: { input: 3, output: 5, total: 8, cached: expect.any(Number), cache_write: 0 },
      cost_usd: first.id === priced?.id ? 0.0058 : null,
      latency_ms: 12,
      finish_reason: expect.any(String),
      provider_finish_reason: null,
      stream: false,
      endpoint: expect.stringMatching(/^(chat\.completions|messages)$/),
      tags: {},
      end_user: null,
      cache_hit: false,
      saved_usd: null,
      requested_model: null,
      batch_id: null,
    });
    expect(res.body.data.find((r: { id: string }) => r.id === priced?.id)).toMatchObject({ cost_usd: 0.0058, tokens: { cached: 1 } });
    const other = res.body.data.find((r: { finish_reason: string }) => r.finish_reason === 'other');
    expect(other).toMatchObject({ provider_finish_reason: 'pause_turn' });
    expectStrictOrder(res.body.data, 'desc');
    const explicit = await h.api('GET', `/v1/usage?project_id=${projectA}&order_desc=timestamp&limit=50`, { token: viewer.token });
    expect(explicit.body.data).toEqual(res.body.data);
  });

  it('page without gaps or repeats while records keep arriving', async () => {
    for (const order of ['desc', 'asc'] as const) {
      const before = (await h.sql`select id from usage_records where project_id = ${projectA}`).map((r) => r.id as string);
      let extra = 0;
      const seen = await pageThrough(viewer.token, `/v1/usage?project_id=${projectA}&limit=7&order_${order}=timestamp`, async (page) => {
        // Newer and older records, and one at the very timestamp of existing ones.
        await insertUsage([
          { ts: T0 + 100_000 + page, project_id: projectA },
          { ts: T0 - 100_000 - page, project_id: projectA },
          { ts: T0 + 15_000, project_id: projectA },
        ]);
        extra += 3;
      });
      const ids = seen.map((r) => r.id);
      expect(new Set(ids).size, 'no repeats').toBe(ids.length);
      expect(ids, 'no gaps').toEqual(expect.arrayContaining(before));
      expectStrictOrder(seen, order);
      expect(extra).toBeGreaterThan(0);
    }
  });

  it('filter by key, model, provider, finish reason and time', async () => {
    const all = await pageThrough(h.adminToken, `/v1/usage?project_id=${projectA}&limit=1000`);
    const count = async (query: string) => (await pageThrough(viewer.token, `/v1/usage?project_id=${projectA}&limit=1000&${query}`)).length;
    const rows = (await h.sql`select key_id, model, provider, finish_reason, endpoint, ts from usage_records where project_id = ${projectA}`) as unknown as {
      key_id: string;
      model: string;
      provider: string;
      finish_reason: string;
      endpoint: string;
      ts: string;
    }[];
    expect(all).toHaveLength(rows.length);
    expect(await count(`key_id=${keyA}`)).toBe(rows.filter((r) => r.key_id === keyA).length);
    expect(await count('model=gpt-4o-mini')).toBe(rows.filter((r) => r.model === 'gpt-4o-mini').length);
    expect(await count('provider=openai')).toBe(rows.filter((r) => r.provider === 'openai').length);
    expect(await count('finish_reason=max_tokens')).toBe(rows.filter((r) => r.finish_reason === 'max_tokens').length);
    expect(await count('finish_reason=other')).toBe(rows.filter((r) => r.finish_reason === 'other').length);
    expect(await count('endpoint=messages')).toBe(rows.filter((r) => r.endpoint === 'messages').length);
    expect(rows.filter((r) => r.endpoint === 'messages').length).toBeGreaterThan(0);
    expect(await count('model=gpt-4o-mini&provider=openai')).toBe(rows.filter((r) => r.model === 'gpt-4o-mini' && r.provider === 'openai').length);
    const from = T0 + 5000;
    const to = T0 + 10_000;
    const window = await pageThrough(viewer.token, `/v1/usage?project_id=${projectA}&from=${from}&to=${to}&limit=3&order_asc=timestamp`);
    expect(window.map((r) => r.timestamp)).toEqual(rows.map((r) => Number(r.ts)).filter((ts) => ts >= from && ts < to).sort((a, b) => a - b));
  });

  it('validate limit, order, filters and cursors', async () => {
    const bad: [string, string][] = [
      ['limit=0', 'query.limit must be >= 1'],
      ['limit=1001', 'query.limit must be <= 1000'],
      ['limit=ten', 'query.limit must be integer'],
      ['order_desc=model', 'query.order_desc must be equal to one of the allowed values'],
      ['order_desc=timestamp&order_asc=timestamp', 'query: give order_desc or order_asc, not both'],
      ['finish_reason=length', 'query.finish_reason must be equal to one of the allowed values'],
      ['endpoint=completions', 'query.endpoint must be equal to one of the allowed values'],
      ['project_id=123', 'query.project_id must match format "uuid"'],
      ['key_id=abc', 'query.key_id must match format "uuid"'],
      ['from=-1', 'query.from must be >= 0'],
      ['from=10&to=5', 'query.from must not be after query.to'],
      ['sort=timestamp', 'query.sort is not a known field'],
      ['outcome=success', 'query.outcome is not a known field'],
      ['cursor=bm90IGEgY3Vyc29y', 'query.cursor is not a cursor this API issued'],
    ];
    for (const [query, message] of bad) {
      const res = await h.api('GET', `/v1/usage?${query}`, { token: viewer.token });
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ code: 'INVALID_REQUEST', message });
    }
    expect((await h.api('GET', '/v1/audit?finish_reason=stop', { token: viewer.token })).status).toBe(400);
    expect((await h.api('GET', '/v1/audit?outcome=maybe', { token: viewer.token })).status).toBe(400);
    expect((await h.api('GET', '/v1/audit?endpoint=models', { token: viewer.token })).status).toBe(400);

    const first = await h.api('GET', `/v1/usage?project_id=${projectA}&limit=2`, { token: viewer.token });
    const cursor = first.body.next_cursor as string;
    const [payload, mac] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const edited = Buffer.from(JSON.stringify({ ...decoded, t: decoded.t - 5000 })).toString('base64url');
    for (const tampered of [`${edited}.${mac}`, `${payload}x.${mac}`, payload]) {
      const res = await h.api('GET', `/v1/usage?project_id=${projectA}&limit=2&cursor=${tampered}`, { token: viewer.token });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('cursor');
    }
    expect((await h.api('GET', `/v1/usage?project_id=${projectA}&order_asc=timestamp&cursor=${cursor}`, { token: viewer.token })).status).toBe(400);
    expect((await h.api('GET', `/v1/audit?cursor=${cursor}`, { token: viewer.token })).status).toBe(400);
    expect((await h.api('GET', `/v1/usage?project_id=${projectA}&limit=2&cursor=${cursor}`, { token: viewer.token })).status).toBe(200);
  });

  it("show a caller only their projects' records; admins see everything", async () => {
    const ofViewer = await pageThrough(viewer.token, '/v1/usage?limit=1000');
    expect(new Set(ofViewer.map((r) => (r as unknown as { project_id: string }).project_id))).toEqual(new Set([projectA]));
    const ofAdmin = await pageThrough(h.adminToken, '/v1/usage?limit=1000');
    expect(new Set(ofAdmin.map((r) => (r as unknown as { project_id: string }).project_id))).toEqual(new Set([projectA, projectB]));
    expect((await h.api('GET', `/v1/usage?project_id=${projectB}`, { token: viewer.token })).status).toBe(404);
    expect((await h.api('GET', `/v1/usage?project_id=${randomUUID()}`, { token: h.adminToken })).status).toBe(404);

    // A member of several projects: per-project walks merged into one keyset order.
    const both = await h.createUser();
    for (const project of [projectA, projectB]) {
      await h.api('POST', `/v1/projects/${project}/members`, { token: h.adminToken, body: { user_id: both.id, role: 'viewer' } });
    }
    for (const order of ['desc', 'asc'] as const) {
      const paged = await pageThrough(both.token, `/v1/usage?limit=9&order_${order}=timestamp`);
      expectStrictOrder(paged, order);
      expect(paged.map((r) => r.id).sort()).toEqual(ofAdmin.map((r) => r.id).sort());
    }

    const loner = await h.createUser();
    const empty = await h.api('GET', '/v1/usage', { token: loner.token });
    expect(empty.body).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  it('list audit events with their filters; gateway-level events are for admins only', async () => {
    await insertAudit([
      { ts: T0 + 1, project_id: projectA, outcome: 'auth_failed' },
      { ts: T0 + 2, project_id: projectA, outcome: 'success', endpoint: 'messages', attempts: 2, providers: ['flaky', 'claude'] },
      { ts: T0 + 3, project_id: projectB, outcome: 'auth_failed' },
      { ts: T0 + 4, project_id: null, outcome: 'auth_failed' },
    ]);
    const mine = await pageThrough(viewer.token, '/v1/audit?limit=3');
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => (e as unknown as { project_id: string }).project_id === projectA)).toBe(true);
    expectStrictOrder(mine, 'desc');

    const failed = await pageThrough(viewer.token, `/v1/audit?project_id=${projectA}&outcome=auth_failed&type=gateway.request`);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toEqual({
      id: expect.any(String),
      request_id: expect.any(String),
      timestamp: T0 + 1,
      type: 'gateway.request',
      outcome: 'auth_failed',
      status: 200,
      error_code: null,
      project_id: projectA,
      key_id: null,
      actor: null,
      target: null,
      model: null,
      provider: null,
      endpoint: null,
      attempts: 0,
      providers: [],
      mcp: null,
      client_ip: null,
      user_agent: null,
      latency_ms: 5,
      count: 1,
      skipped: [],
      tags: {},
      end_user: null,
      cache: null,
      guardrails: [],
      batch_id: null,
    });
    const onMessages = await pageThrough(viewer.token, `/v1/audit?project_id=${projectA}&endpoint=messages`);
    expect(onMessages).toHaveLength(1);
    expect(onMessages[0]).toMatchObject({ timestamp: T0 + 2, endpoint: 'messages', attempts: 2, providers: ['flaky', 'claude'] });
    const managed = await pageThrough(viewer.token, `/v1/audit?project_id=${projectA}&type=member.added`);
    expect(managed.length).toBeGreaterThan(0);
    expect(new Set(managed.map((e) => (e as unknown as { actor: string }).actor))).toEqual(new Set([h.adminId]));

    const everything = await pageThrough(h.adminToken, '/v1/audit?limit=1000&order_asc=timestamp');
    const kinds = new Set(everything.map((e) => (e as unknown as { project_id: string | null }).project_id));
    expect(kinds).toContain(null);
    expect(everything.some((e) => (e as unknown as { type: string }).type === 'signin.succeeded')).toBe(true);
    expect(mine.some((e) => (e as unknown as { type: string }).type.startsWith('signin.'))).toBe(false);
  });
});

describe('usage summary', () => {
  const T1 = Date.UTC(2026, 2, 1);
  let viewer: User;
  let projectP: string;
  let projectQ: string;
  let projectR: string;
  const k1 = randomUUID();
  const k2 = randomUUID();
  let seeds: UsageSeed[];

  beforeAll(async () => {
    viewer = await h.createUser();
    const create = async (name: string) => (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } })).body.id as string;
    projectP = await create('P');
    projectQ = await create('Q');
    projectR = await create('R');
    for (const project of [projectP, projectR]) {
      await h.api('POST', `/v1/projects/${project}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } });
    }
    seeds = [
      { ts: T1, project_id: projectP, key_id: k1, model: 'a', provider: 'openai', endpoint: 'chat.completions', input: 10, output: 20, cached: 4, cost: 0.001 },
      { ts: T1 + 1000, project_id: projectP, key_id: k2, model: 'a', provider: 'openai', endpoint: 'messages', input: 5, output: 5, cost: null },
      { ts: T1 + 2000, project_id: projectP, key_id: k1, model: 'b', provider: 'claude', endpoint: 'messages', input: 7, output: 3, cached: 2, finish_reason: 'other', provider_finish_reason: 'pause_turn' },
      { ts: T1 + 3000, project_id: projectP, key_id: k2, model: 'c', provider: 'openai', endpoint: 'embeddings', input: 100, output: 0, cost: 0.000_000_2 },
      { ts: T1 + 10_000, project_id: projectP, key_id: k1, model: 'a', provider: 'claude', endpoint: 'chat.completions', input: 1, output: 1, cost: 0.0025 },
      { ts: T1, project_id: projectQ, model: 'a', input: 1000, output: 0, cost: 1 },
      { ts: T1 + 5000, project_id: projectR, model: 'a', input: 2, output: 2, cost: 0.5 },
    ];
    await insertUsage(seeds);
  });

  const summary = (query: string, token = viewer.token) => h.api('GET', `/v1/usage/summary?${query}`, { token });

  /** What the summary must say, added up here from the seeds. */
  function expected(rows: UsageSeed[], key: (r: UsageSeed) => string, name: string) {
    const figures = (group: UsageSeed[]) => {
      const costs = group.map((r) => r.cost).filter((c): c is number => typeof c === 'number');
      const input = group.reduce((n, r) => n + (r.input ?? 3), 0);
      const output = group.reduce((n, r) => n + (r.output ?? 5), 0);
      return {
        requests: group.length,
        tokens: { input, output, total: input + output, cached: group.reduce((n, r) => n + (r.cached ?? 0), 0) },
        cost_usd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
      };
    };
    const groups = new Map<string, UsageSeed[]>();
    for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
    const data = [...groups.entries()]
      .sort(([a, am], [b, bm]) => figures(bm).tokens.total - figures(am).tokens.total || a.localeCompare(b))
      .map(([group, members]) => ({ [name]: group, ...figures(members) }));
    return { data, totals: figures(rows) };
  }

  /** Equal, with costs compared to the 10th decimal (the column's scale). */
  function expectSummary(actual: unknown, wanted: ReturnType<typeof expected>) {
    const rounded = (v: unknown): unknown =>
      typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e10) / 1e10 : Array.isArray(v) ? v.map(rounded) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rounded(x)])) : v;
    expect(rounded(actual)).toEqual(rounded(wanted));
  }

  const inP = () => seeds.filter((r) => r.project_id === projectP);

  it('sums requests, tokens and cost per model by default, busiest first, with totals', async () => {
    const res = await summary(`project_id=${projectP}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      data: [
        { model: 'c', requests: 1, tokens: { input: 100, output: 0, total: 100, cached: 0 }, cost_usd: 0.0000002 },
        { model: 'a', requests: 3, tokens: { input: 16, output: 26, total: 42, cached: 4 }, cost_usd: 0.0035 },
        // No record of b has a price: its cost is unknown, not zero.
        { model: 'b', requests: 1, tokens: { input: 7, output: 3, total: 10, cached: 2 }, cost_usd: null },
      ],
      totals: { requests: 5, tokens: { input: 123, output: 29, total: 152, cached: 6 }, cost_usd: 0.0035002 },
    });
  });

  it('groups by project, provider, key and endpoint', async () => {
    const groups: [string, (r: UsageSeed) => string][] = [
      ['provider', (r) => r.provider ?? 'mock'],
      ['key', (r) => r.key_id as string],
      ['endpoint', (r) => r.endpoint ?? 'chat.completions'],
      ['project', (r) => r.project_id],
    ];
    for (const [group, key] of groups) {
      const res = await summary(`project_id=${projectP}&group_by=${group}`);
      expect(res.status, group).toBe(200);
      expectSummary(res.body, expected(inP(), key, group));
    }
    const byEndpoint = (await summary(`project_id=${projectP}&group_by=endpoint`)).body;
    expect(byEndpoint.data.find((g: { endpoint: string }) => g.endpoint === 'messages').cost_usd).toBeNull();
  });

  it('applies the filters and the time range', async () => {
    const cases: [string, (r: UsageSeed) => boolean][] = [
      [`from=${T1}&to=${T1 + 10_000}`, (r) => r.ts < T1 + 10_000],
      [`from=${T1 + 1000}`, (r) => r.ts >= T1 + 1000],
      [`key_id=${k2}`, (r) => r.key_id === k2],
      ['model=a', (r) => r.model === 'a'],
      ['provider=claude', (r) => r.provider === 'claude'],
      ['endpoint=messages', (r) => r.endpoint === 'messages'],
      ['finish_reason=other', (r) => r.finish_reason === 'other'],
      [`model=a&key_id=${k1}&from=${T1}&to=${T1 + 1}`, (r) => r.model === 'a' && r.key_id === k1 && r.ts === T1],
    ];
    for (const [query, keep] of cases) {
      const res = await summary(`project_id=${projectP}&group_by=provider&${query}`);
      expect(res.status, query).toBe(200);
      expectSummary(res.body, expected(inP().filter(keep), (r) => r.provider ?? 'mock', 'provider'));
    }
    // Only unpriced records: the total cost is unknown too.
    expect((await summary(`project_id=${projectP}&endpoint=messages`)).body.totals.cost_usd).toBeNull();
    expect((await summary(`project_id=${projectP}&from=${T1 - 10}&to=${T1 - 1}`)).body).toEqual({
      data: [],
      totals: { requests: 0, tokens: { input: 0, output: 0, total: 0, cached: 0 }, cost_usd: null },
    });
  });

  it("covers only the caller's projects; another project is a 404", async () => {
    const mine = await summary(`group_by=project&from=${T1}&to=${T1 + 60_000}`);
    expectSummary(mine.body, expected(seeds.filter((r) => r.project_id !== projectQ), (r) => r.project_id, 'project'));
    expect((await summary(`project_id=${projectQ}`)).status).toBe(404);
    expect((await summary(`project_id=${randomUUID()}`, h.adminToken)).status).toBe(404);

    const all = await summary(`group_by=project&from=${T1}&to=${T1 + 60_000}`, h.adminToken);
    expectSummary(all.body, expected(seeds, (r) => r.project_id, 'project'));
    expect(all.body.data[0]).toEqual({ project: projectQ, requests: 1, tokens: { input: 1000, output: 0, total: 1000, cached: 0 }, cost_usd: 1 });

    const loner = await h.createUser();
    expect((await summary('', loner.token)).body).toEqual({ data: [], totals: { requests: 0, tokens: { input: 0, output: 0, total: 0, cached: 0 }, cost_usd: null } });
    expect((await h.api('GET', '/v1/usage/summary')).status).toBe(401);
  });

  it('validates its parameters', async () => {
    const bad: [string, string][] = [
      ['group_by=day', 'query.group_by must match pattern "^(project|model|provider|key|endpoint|end_user|tag:[a-z0-9_.-]{1,32})$"'],
      ['endpoint=completions', 'query.endpoint must be equal to one of the allowed values'],
      ['from=10&to=5', 'query.from must not be after query.to'],
      ['limit=5', 'query.limit is not a known field'],
      ['cursor=abc', 'query.cursor is not a known field'],
      ['project_id=123', 'query.project_id must match format "uuid"'],
    ];
    for (const [query, message] of bad) {
      const res = await summary(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ code: 'INVALID_REQUEST', message });
    }
  });
});

describe('records of batch lines', () => {
  const T2 = Date.UTC(2026, 4, 1);
  const BATCH = 'batch_0192f3a45b6c7d8e9f00';
  const OTHER = 'msgbatch_01HZX3Q7ABCDEF';
  let viewer: User;
  let project: string;
  const keyId = randomUUID();

  /** A request's two records as the proxy makes them, stamped at `ts` (the batch runner's time for a line). */
  function line(ts: number, batchId: string | null): { usage: UsageRecord; audit: AuditEvent } {
    const id = newRecordId();
    const requestId = `req-${randomUUID()}`;
    const batch = batchId === null ? {} : { batch_id: batchId };
    return {
      usage: {
        id,
        request_id: requestId,
        project_id: project,
        key_id: keyId,
        timestamp: ts,
        model: 'mock-1',
        provider: 'mock',
        tokens: { input: 3, output: 5, total: 8, cached: 0 },
        cost_usd: null,
        latency_ms: 7,
        finish_reason: 'stop',
        provider_finish_reason: null,
        stream: false,
        endpoint: 'chat.completions',
        ...batch,
      },
      audit: {
        id,
        request_id: requestId,
        timestamp: ts,
        type: 'gateway.request',
        outcome: 'success',
        status: 200,
        error_code: null,
        project_id: project,
        key_id: keyId,
        actor: null,
        model: 'mock-1',
        provider: 'mock',
        endpoint: 'chat.completions',
        attempts: 1,
        providers: ['mock'],
        client_ip: null,
        user_agent: null,
        latency_ms: 7,
        ...batch,
      },
    };
  }

  /** Through the path the proxy's batches take: compact rows, the batch envelope, the writer's checks and its insert. */
  async function write(lines: { usage: UsageRecord; audit: AuditEvent }[]) {
    const segment = new CompactRowsWriter();
    for (const l of lines) segment.add(l.audit, l.usage);
    segment.seal();
    const batch = decodeRecordBatch(encodeCompactRecordBatch([segment]));
    expect(batch.v).toBe(RECORD_BATCH_VERSION);
    const usage = emptyUsageRows();
    const audit = emptyAuditRows();
    expect([...addUsageRows(usage, batch.usage, batch.v), ...addAuditRows(audit, batch.audit, batch.v)]).toEqual([]);
    return writeBatch(h.sql as unknown as Db, usage, audit);
  }

  let ofBatch: { usage: UsageRecord; audit: AuditEvent }[];

  beforeAll(async () => {
    viewer = await h.createUser();
    project = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'batches' } })).body.id;
    await h.api('POST', `/v1/projects/${project}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } });
    ofBatch = [0, 1, 2].map((i) => line(T2 + i * 1000, BATCH));
    const result = await write([...ofBatch, line(T2 + 500, OTHER), line(T2 + 1500, null)]);
    expect({ usage: result.usageInserted, audit: result.auditInserted }).toEqual({ usage: 5, audit: 5 });
  });

  it('land with their batch id and are served with it; other requests have none', async () => {
    const usage = await pageThrough(viewer.token, `/v1/usage?project_id=${project}`);
    expect(usage).toHaveLength(5);
    const byId = new Map(usage.map((r) => [r.id, r as unknown as { batch_id: string | null; timestamp: number }]));
    for (const l of ofBatch) expect(byId.get(l.usage.id)).toMatchObject({ batch_id: BATCH, timestamp: l.usage.timestamp });
    expect([...byId.values()].map((r) => r.batch_id).sort()).toEqual([BATCH, BATCH, BATCH, OTHER, null].sort());

    const audit = await pageThrough(viewer.token, `/v1/audit?project_id=${project}&type=gateway.request`);
    expect(audit).toHaveLength(5);
    const eventsById = new Map(audit.map((e) => [e.id, e as unknown as { batch_id: string | null }]));
    for (const l of ofBatch) expect(eventsById.get(l.audit.id)).toMatchObject({ batch_id: BATCH, timestamp: l.audit.timestamp });
    expect([...eventsById.values()].map((e) => e.batch_id).sort()).toEqual([BATCH, BATCH, BATCH, OTHER, null].sort());
  });

  it('filter by batch id, in keyset order, across pages', async () => {
    for (const order of ['desc', 'asc'] as const) {
      const usage = await pageThrough(viewer.token, `/v1/usage?project_id=${project}&batch_id=${BATCH}&limit=2&order_${order}=timestamp`);
      expect(usage.map((r) => r.id).sort()).toEqual(ofBatch.map((l) => l.usage.id).sort());
      expectStrictOrder(usage, order);
      const audit = await pageThrough(viewer.token, `/v1/audit?project_id=${project}&batch_id=${BATCH}&limit=2&order_${order}=timestamp`);
      expect(audit.map((e) => e.id).sort()).toEqual(ofBatch.map((l) => l.audit.id).sort());
      expectStrictOrder(audit, order);
    }
    // Without project_id: the caller's projects, as for every other filter.
    expect((await pageThrough(viewer.token, `/v1/usage?batch_id=${OTHER}`)).map((r) => (r as unknown as { batch_id: string }).batch_id)).toEqual([OTHER]);
    expect(await pageThrough(viewer.token, `/v1/audit?batch_id=${OTHER}`)).toHaveLength(1);
    expect(await pageThrough(viewer.token, '/v1/usage?batch_id=batch_none')).toEqual([]);
    for (const list of ['usage', 'audit']) {
      for (const [query, message] of [
        ['batch_id=', 'query.batch_id must NOT have fewer than 1 characters'],
        [`batch_id=${'b'.repeat(129)}`, 'query.batch_id must NOT have more than 128 characters'],
      ] as const) {
        const res = await h.api('GET', `/v1/${list}?${query}`, { token: viewer.token });
        expect(res.status, `${list} ${query}`).toBe(400);
        expect(res.body.error, `${list} ${query}`).toMatchObject({ code: 'INVALID_REQUEST', message });
      }
    }
  });

  it("drop a line's records written again with the same timestamp and id, as after a crash", async () => {
    const again = await write(ofBatch);
    expect({ usage: again.usageInserted, audit: again.auditInserted }).toEqual({ usage: 0, audit: 0 });
    expect(await pageThrough(viewer.token, `/v1/usage?project_id=${project}&batch_id=${BATCH}`)).toHaveLength(3);
  });

  it('store no batch id from a batch older than version 6, and refuse one that is empty or too long', () => {
    const usage = emptyUsageRows();
    const audit = emptyAuditRows();
    const old = line(T2, BATCH);
    expect([...addUsageRows(usage, [old.usage], 5), ...addAuditRows(audit, [old.audit], 5)]).toEqual([]);
    expect({ usage: usage.batchId, audit: audit.batchId }).toEqual({ usage: [null], audit: [null] });
    for (const bad of ['', 'b'.repeat(129), 7]) {
      const l = line(T2, bad as string);
      expect(addUsageRows(emptyUsageRows(), [l.usage], 6)).toEqual([{ table: 'usage_records', id: l.usage.id, reason: expect.stringMatching(/batch_id/) }]);
      expect(addAuditRows(emptyAuditRows(), [l.audit], 6)).toEqual([{ table: 'audit_events', id: l.audit.id, reason: expect.stringMatching(/batch_id/) }]);
    }
  });
});
