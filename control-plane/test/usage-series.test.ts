import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/** GET /v1/usage/series against a real control plane and PostgreSQL. */
let h: Harness;
let projectA: string;
let projectB: string;
let member: Awaited<ReturnType<Harness['createUser']>>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 10);

beforeAll(async () => {
  h = await startHarness('usageseries');
  projectA = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'A' } })).body.id;
  projectB = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'B' } })).body.id;
  member = await h.createUser('member');
  await h.api('POST', `/v1/projects/${projectA}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'viewer' } });
  const row = (ts: number, projectId: string, model: string, total: number, cost: string | null) => ({
    ts,
    id: randomUUID(),
    request_id: `req-${randomUUID()}`,
    project_id: projectId,
    key_id: randomUUID(),
    model,
    provider: 'mock',
    input_tokens: total - 1,
    output_tokens: 1,
    total_tokens: total,
    cached_tokens: 0,
    cost_usd: cost,
    latency_ms: 5,
    finish_reason: 'stop',
    stream: false,
    endpoint: 'chat.completions',
  });
  await h.sql`insert into usage_records ${h.sql([
    row(T0 + 10 * 60_000, projectA, 'm1', 10, '0.001'),
    row(T0 + 50 * 60_000, projectA, 'm1', 20, '0.002'),
    row(T0 + 70 * 60_000, projectA, 'm2', 30, null),
    row(T0 + 3 * HOUR, projectB, 'm1', 40, null),
    // 23:00 UTC: the next day at UTC+05:30, the same day in UTC.
    row(T0 + 23 * HOUR, projectA, 'm1', 50, null),
  ])}`;
});
afterAll(async () => h?.close());

const series = (query: string, token = h.adminToken) => h.api('GET', `/v1/usage/series?${query}`, { token });

describe('GET /v1/usage/series', () => {
  it('sums per bucket and group, oldest first, listing only buckets with records', async () => {
    const res = await series(`project_id=${projectA}&from=${T0}&to=${T0 + DAY}&bucket_ms=${HOUR}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      bucket_ms: HOUR,
      offset_ms: 0,
      data: [
        { start: T0, model: 'm1', requests: 2, tokens: { input: 28, output: 2, total: 30, cached: 0 }, cost_usd: 0.003 },
        { start: T0 + HOUR, model: 'm2', requests: 1, tokens: { input: 29, output: 1, total: 30, cached: 0 }, cost_usd: null },
        { start: T0 + 23 * HOUR, model: 'm1', requests: 1, tokens: { input: 49, output: 1, total: 50, cached: 0 }, cost_usd: null },
      ],
    });
  });

  it('shifts buckets by the offset, so day buckets start at the client’s midnight', async () => {
    const offset = 5.5 * HOUR;
    const utc = await series(`project_id=${projectA}&from=${T0 - DAY}&to=${T0 + 2 * DAY}&bucket_ms=${DAY}`);
    expect(utc.body.data.map((p: { start: number; model: string; tokens: { total: number } }) => [p.start, p.model, p.tokens.total])).toEqual([
      [T0, 'm1', 80],
      [T0, 'm2', 30],
    ]);
    const local = await series(`project_id=${projectA}&from=${T0 - DAY}&to=${T0 + 2 * DAY}&bucket_ms=${DAY}&offset_ms=${offset}&group_by=provider`);
    expect(local.status, local.text).toBe(200);
    expect(local.body.data).toEqual([
      expect.objectContaining({ start: T0 - offset, provider: 'mock', requests: 3 }),
      expect.objectContaining({ start: T0 + DAY - offset, provider: 'mock', requests: 1 }),
    ]);
  });

  it('follows the access rules of the usage list', async () => {
    const range = `from=${T0}&to=${T0 + DAY}&bucket_ms=${DAY}&group_by=project`;
    const all = await series(range);
    expect(all.body.data.map((p: { project: string }) => p.project).sort()).toEqual([projectA, projectB].sort());
    const mine = await series(range, member.token);
    expect(mine.body.data.map((p: { project: string }) => p.project)).toEqual([projectA]);
    const foreign = await series(`project_id=${projectB}&${range}`, member.token);
    expect(foreign.status).toBe(404);
    expect((await h.api('GET', `/v1/usage/series?${range}`)).status).toBe(401);
  });

  it('refuses a range without bounds, backwards, or cut into too many buckets', async () => {
    for (const [query, param] of [
      [`to=${T0}&bucket_ms=${HOUR}`, 'from'],
      [`from=${T0}&to=${T0}&bucket_ms=${HOUR}`, 'from'],
      [`from=${T0}&to=${T0 + DAY}&bucket_ms=1000`, 'bucket_ms'],
      [`from=0&to=${T0}&bucket_ms=60000`, 'bucket_ms'],
      [`from=${T0}&to=${T0 + DAY}&bucket_ms=${HOUR}&offset_ms=${15 * HOUR}`, 'offset_ms'],
    ] as const) {
      const res = await series(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.param, query).toBe(param);
    }
  });
});
