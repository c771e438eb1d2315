import { decodeProjectBudgets, RedisKeys } from '@gateway/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * The budget routes as a client meets them: what a budget may be (400 naming the field), who may
 * change one, what the answers show of the current period, the audit trail, and the projection
 * the proxies read.
 */
let h: Harness;
let keys: RedisKeys;
let projectId: string;
let keyId: string;
type User = Awaited<ReturnType<Harness['createUser']>>;
let viewer: User;

beforeAll(async () => {
  h = await startHarness('budgetsapi');
  keys = new RedisKeys(h.prefix);
  projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'spend' } })).body.id;
  keyId = (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'k' } })).body.id;
  viewer = await h.createUser();
  expect((await h.api('POST', `/v1/projects/${projectId}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } })).status).toBe(201);
});

afterAll(async () => {
  await h?.close();
});

const create = (body: object, token = h.adminToken) => h.api('POST', `/v1/projects/${projectId}/budgets`, { token, body });

describe('budgets', () => {
  it('creates a monthly budget in a time zone and answers where its period stands', async () => {
    const res = await create({ scope: 'project', limit_usd: 25, period: 'month', timezone: 'Europe/Paris', alert_at: [1, 0.8] });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ project_id: projectId, scope: 'project', key_id: null, tag: null, limit_usd: 25, period: 'month', timezone: 'Europe/Paris', alert_at: [0.8, 1], spent_usd: 0, reserved_usd: 0 });
    // Midnight of the 1st in Paris is 22:00 or 23:00 UTC the day before.
    expect(res.body.period_start).toMatch(/T2[23]:00:00.000Z$/);
    const start = new Date(res.body.period_start);
    const resets = new Date(res.body.resets_at);
    expect(resets.getTime()).toBeGreaterThan(Date.now());
    expect(start.getTime()).toBeLessThanOrEqual(Date.now());
    expect((resets.getTime() - start.getTime()) / 86_400_000).toBeGreaterThanOrEqual(27.9);

    const one = await h.api('GET', `/v1/projects/${projectId}/budgets/${res.body.id}`, { token: viewer.token });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(res.body.id);
    const [audit] = (await h.api('GET', `/v1/audit?project_id=${projectId}&type=budget.created`, { token: h.adminToken })).body.data;
    expect(audit).toMatchObject({ type: 'budget.created', outcome: 'success', status: 201, actor: h.adminId, target: { type: 'budget', id: res.body.id } });

    // Projected for the proxies, versioned, with its ledger started.
    const projected = decodeProjectBudgets((await h.redis.get(keys.projectBudgets(projectId))) as string);
    expect(projected.budgets.map((b) => b.id)).toContain(res.body.id);
  });

  it('fixed windows start at the creation; a weekly period starts on a Monday', async () => {
    const fixed = await create({ scope: 'key', key_id: keyId, limit_usd: 1.5, period: '6h' });
    expect(fixed.status, fixed.text).toBe(201);
    expect(new Date(fixed.body.resets_at).getTime() - new Date(fixed.body.period_start).getTime()).toBe(6 * 3600_000);
    expect(Math.abs(new Date(fixed.body.period_start).getTime() - new Date(fixed.body.created_at).getTime())).toBeLessThan(1000);
    const weekly = await create({ scope: 'tag', tag: 'team=search', limit_usd: 10, period: 'week' });
    expect(weekly.status, weekly.text).toBe(201);
    expect(new Date(weekly.body.period_start).getUTCDay()).toBe(1);
    expect(weekly.body.period_start).toMatch(/T00:00:00.000Z$/);
  });

  it('refuses bad bodies with a 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ scope: 'team', limit_usd: 1, period: 'day' }, 'scope'],
      [{ scope: 'project', limit_usd: -1, period: 'day' }, 'limit_usd'],
      [{ scope: 'project', limit_usd: '5', period: 'day' }, 'limit_usd'],
      [{ scope: 'project', limit_usd: 1, period: 'fortnight' }, 'period'],
      [{ scope: 'project', limit_usd: 1, period: '0h' }, 'period'],
      [{ scope: 'project', limit_usd: 1, period: 'day', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ scope: 'project', limit_usd: 1, period: 'day', alert_at: [1.5] }, 'alert_at'],
      [{ scope: 'key', limit_usd: 1, period: 'day' }, 'key_id'],
      [{ scope: 'key', key_id: '00000000-0000-4000-8000-000000000000', limit_usd: 1, period: 'day' }, 'key_id'],
      [{ scope: 'tag', limit_usd: 1, period: 'day' }, 'tag'],
      [{ scope: 'tag', tag: 'Team=x', limit_usd: 1, period: 'day' }, 'tag'],
      [{ scope: 'project', tag: 'team=x', limit_usd: 1, period: 'day' }, 'tag'],
      [{ limit_usd: 1, period: 'day' }, 'scope'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(`${res.body.error.param} ${res.body.error.message}`, JSON.stringify(body)).toContain(field);
    }
  });

  it('lets viewers read and only project admins change', async () => {
    expect((await h.api('GET', `/v1/projects/${projectId}/budgets`, { token: viewer.token })).status).toBe(200);
    expect((await create({ scope: 'project', limit_usd: 1, period: 'day' }, viewer.token)).status).toBe(403);
  });

  it('changes and deletes a budget, and the projection follows', async () => {
    const made = await create({ scope: 'project', limit_usd: 5, period: 'day' });
    const patched = await h.api('PATCH', `/v1/projects/${projectId}/budgets/${made.body.id}`, { token: h.adminToken, body: { limit_usd: 7.25, period: '30m' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ limit_usd: 7.25, period: '30m' });
    const bad = await h.api('PATCH', `/v1/projects/${projectId}/budgets/${made.body.id}`, { token: h.adminToken, body: { scope: 'key' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('key_id');
    let projected = decodeProjectBudgets((await h.redis.get(keys.projectBudgets(projectId))) as string);
    expect(projected.budgets.find((b) => b.id === made.body.id)).toMatchObject({ limit_usd: 7.25, period: '30m' });

    expect((await h.api('DELETE', `/v1/projects/${projectId}/budgets/${made.body.id}`, { token: h.adminToken })).status).toBe(204);
    expect((await h.api('GET', `/v1/projects/${projectId}/budgets/${made.body.id}`, { token: h.adminToken })).status).toBe(404);
    projected = decodeProjectBudgets((await h.redis.get(keys.projectBudgets(projectId))) as string);
    expect(projected.budgets.find((b) => b.id === made.body.id)).toBeUndefined();
    const [audit] = (await h.api('GET', `/v1/audit?project_id=${projectId}&type=budget.deleted`, { token: h.adminToken })).body.data;
    expect(audit).toMatchObject({ outcome: 'success', target: { type: 'budget', id: made.body.id } });
  });

  it('shows the spend of the usage records in the period when Redis has no ledger', async () => {
    const made = await create({ scope: 'key', key_id: keyId, limit_usd: 3, period: 'total' });
    const now = Date.now();
    await h.sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, latency_ms, finish_reason, stream, cost_usd)
      values (${now}, gen_random_uuid(), 'r1', ${projectId}, ${keyId}, 'm', 'p', 1, 1, 2, 1, 'stop', false, 0.75),
             (${now}, gen_random_uuid(), 'r2', ${projectId}, ${keyId}, 'm', 'p', 1, 1, 2, 1, 'stop', false, 0.5)`;
    await h.redis.del(keys.budgetLedger(projectId, made.body.id, 'total'));
    const res = await h.api('GET', `/v1/projects/${projectId}/budgets/${made.body.id}`, { token: h.adminToken });
    expect(res.body).toMatchObject({ spent_usd: 1.25, reserved_usd: 0, resets_at: null });
  });
});
