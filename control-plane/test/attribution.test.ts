import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS } from '../src/http/routes/usage-export.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Cost attribution in the management API, over records as the writer stores them: the usage and
 * audit lists filtered by `tag=<key>=<value>` (repeatable) and `end_user`, the usage summary
 * grouped by a tag or the end user (the groups add up exactly to the totals), and the CSV export.
 */
let h: Harness;
let projectId: string;
let keyA: string;
let keyB: string;
const T0 = Date.UTC(2026, 1, 1);

interface Row {
  tags: Record<string, string>;
  end_user: string | null;
  key: 'a' | 'b';
  cost: string | null;
  total: number;
}

const ROWS: Row[] = [
  { tags: { team: 'search', feature: 'rag' }, end_user: 'alice', key: 'a', cost: '0.0100000000', total: 100 },
  { tags: { team: 'search' }, end_user: 'bob', key: 'a', cost: '0.0200000000', total: 200 },
  { tags: { team: 'ads' }, end_user: 'alice', key: 'b', cost: '0.0400000000', total: 400 },
  { tags: {}, end_user: null, key: 'b', cost: null, total: 800 },
];

beforeAll(async () => {
  h = await startHarness('attribution');
  projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'attributed' } })).body.id;
  keyA = (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'a' } })).body.id;
  keyB = (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'b' } })).body.id;
  const usage = ROWS.map((r, i) => ({
    ts: T0 + i * 1000,
    id: randomUUID(),
    request_id: `req-${i}`,
    project_id: projectId,
    key_id: r.key === 'a' ? keyA : keyB,
    model: 'm',
    provider: 'p',
    input_tokens: r.total - 10,
    output_tokens: 10,
    total_tokens: r.total,
    cached_tokens: 0,
    cost_usd: r.cost,
    latency_ms: 5,
    finish_reason: 'stop',
    provider_finish_reason: null,
    stream: false,
    endpoint: 'chat.completions',
    tags: h.sql.json(r.tags),
    end_user: r.end_user,
  }));
  await h.sql`insert into usage_records ${h.sql(usage as never)}`;
  const audit = ROWS.map((r, i) => ({
    ts: T0 + i * 1000,
    id: randomUUID(),
    request_id: `req-${i}`,
    type: 'gateway.request',
    outcome: 'success',
    status: 200,
    project_id: projectId,
    key_id: r.key === 'a' ? keyA : keyB,
    latency_ms: 5,
    tags: h.sql.json(r.tags),
    end_user: r.end_user,
  }));
  await h.sql`insert into audit_events ${h.sql(audit as never)}`;
});
afterAll(async () => h?.close());

const range = `from=${T0}&to=${T0 + 60_000}`;
const get = (path: string) => h.api('GET', path, { token: h.adminToken });

describe('attribution filters', () => {
  it('select the usage records carrying every tag given', async () => {
    const search = await get(`/v1/usage?project_id=${projectId}&${range}&tag=team=search`);
    expect(search.status).toBe(200);
    expect(search.body.data.map((r: { request_id: string }) => r.request_id).sort()).toEqual(['req-0', 'req-1']);
    expect(search.body.data[0].tags.team).toBe('search');
    const both = await get(`/v1/usage?project_id=${projectId}&${range}&tag=team=search&tag=feature=rag`);
    expect(both.body.data.map((r: { request_id: string }) => r.request_id)).toEqual(['req-0']);
    const none = await get(`/v1/usage?project_id=${projectId}&${range}&tag=team=nobody`);
    expect(none.body.data).toEqual([]);
  });

  it('select the usage records of one end user, with the other filters', async () => {
    const alice = await get(`/v1/usage?project_id=${projectId}&${range}&end_user=alice`);
    expect(alice.body.data.map((r: { request_id: string }) => r.request_id).sort()).toEqual(['req-0', 'req-2']);
    const aliceAds = await get(`/v1/usage?project_id=${projectId}&${range}&end_user=alice&tag=team=ads&key_id=${keyB}`);
    expect(aliceAds.body.data.map((r: { request_id: string }) => r.request_id)).toEqual(['req-2']);
  });

  it('select audit events the same way', async () => {
    const events = await get(`/v1/audit?project_id=${projectId}&${range}&tag=team=search&end_user=bob`);
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { request_id: string }) => e.request_id)).toEqual(['req-1']);
    expect(events.body.data[0]).toMatchObject({ tags: { team: 'search' }, end_user: 'bob' });
  });

  it('refuse a malformed tag with a 400 naming it', async () => {
    for (const [tag, named] of [
      ['team', '`team`'],
      ['Team=x', '`Team`'],
      ['team=a%20b', 'tag `team`'],
    ] as const) {
      for (const list of ['usage', 'audit', 'usage/summary']) {
        const res = await get(`/v1/${list}?project_id=${projectId}&tag=${tag}`);
        expect(res.status, `${list} ${tag}`).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'tag' });
        expect(res.body.error.message).toContain(named);
      }
    }
    const twice = await get(`/v1/usage?project_id=${projectId}&tag=team=a&tag=team=b`);
    expect(twice.status).toBe(400);
  });
});

describe('usage summary by tag and end user', () => {
  it('groups by one tag, the records without it in the null group, adding up exactly', async () => {
    const res = await get(`/v1/usage/summary?project_id=${projectId}&${range}&group_by=tag:team`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { tag: null, requests: 1, tokens: { input: 790, output: 10, total: 800, cached: 0 }, cost_usd: null },
      { tag: 'ads', requests: 1, tokens: { input: 390, output: 10, total: 400, cached: 0 }, cost_usd: 0.04 },
      { tag: 'search', requests: 2, tokens: { input: 280, output: 20, total: 300, cached: 0 }, cost_usd: 0.03 },
    ]);
    expect(res.body.totals).toEqual({ requests: 4, tokens: { input: 1460, output: 40, total: 1500, cached: 0 }, cost_usd: 0.07 });
  });

  it('groups by end user, and by key under a tag filter', async () => {
    const users = await get(`/v1/usage/summary?project_id=${projectId}&${range}&group_by=end_user`);
    expect(users.body.data.map((g: { end_user: string | null; requests: number; tokens: { total: number } }) => [g.end_user, g.requests, g.tokens.total])).toEqual([
      [null, 1, 800],
      ['alice', 2, 500],
      ['bob', 1, 200],
    ]);
    const keys = await get(`/v1/usage/summary?project_id=${projectId}&${range}&group_by=key&tag=team=search`);
    expect(keys.body.data).toEqual([{ key: keyA, requests: 2, tokens: { input: 280, output: 20, total: 300, cached: 0 }, cost_usd: 0.03 }]);
    expect(keys.body.totals.requests).toBe(2);
  });

  it('refuses a group it does not know', async () => {
    for (const groupBy of ['tag:', 'tag:Team', 'users', 'tag:' + 'k'.repeat(33)]) {
      const res = await get(`/v1/usage/summary?project_id=${projectId}&group_by=${groupBy}`);
      expect(res.status, groupBy).toBe(400);
      expect(res.body.error.param).toBe('group_by');
    }
  });
});

describe('usage export', () => {
  it('has the tags and end user of each record', async () => {
    const res = await get(`/v1/usage/export?project_id=${projectId}&${range}&order_asc=timestamp`);
    expect(res.status).toBe(200);
    const lines = res.text.trim().split('\r\n');
    const header = (lines[0] as string).split(',');
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(header.slice(-5)).toEqual(['tags', 'end_user', 'cache_write_tokens', 'requested_model', 'batch_id']);
    // No alias served these records and none was a batch line: requested_model and batch_id are empty.
    expect(lines[1]).toMatch(/,"(team=search,feature=rag|feature=rag,team=search)",alice,0,,$/);
    expect(lines[4]).toMatch(/,,,0,,$/);
    const filtered = await get(`/v1/usage/export?project_id=${projectId}&${range}&end_user=bob`);
    expect(filtered.text.trim().split('\r\n')).toHaveLength(2);
  });
});
