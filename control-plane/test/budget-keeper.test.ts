import { setTimeout as sleep } from 'node:timers/promises';
import { RedisKeys } from '@gateway/shared';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetKeeper } from '../src/budgets/budget-keeper.js';
import { startHarness, type Harness } from './harness.js';
import { eventually, startReceiver, startWebhookWriter, type Receiver, type TestWriter } from './webhook-fixtures.js';

/**
 * The budget keeper: a Redis that lost its ledgers gets them back from the usage records' cost_usd
 * before any proxy may start one at 0, and each alert_at fraction a budget reached is announced as
 * one budget.threshold event per period, whichever control plane looks and however often.
 */
let h: Harness;
let receiver: Receiver;
let writer: TestWriter;
let keys: RedisKeys;

beforeAll(async () => {
  h = await startHarness('budgetkeeper', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await startReceiver();
  writer = await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { webhooks: { sweepIntervalMs: 3_600_000, retryDelaysMs: [50] } });
  keys = new RedisKeys(h.prefix);
});

afterAll(async () => {
  await writer?.close();
  await receiver?.close();
  await h?.close();
});

async function setup(name: string, budget: object): Promise<{ projectId: string; keyId: string; budgetId: string }> {
  const projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } })).body.id;
  const keyId = (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'k' } })).body.id;
  const made = await h.api('POST', `/v1/projects/${projectId}/budgets`, { token: h.adminToken, body: budget });
  expect(made.status, made.text).toBe(201);
  return { projectId, keyId, budgetId: made.body.id };
}

describe('budget keeper', () => {
  it('announces each fraction reached once per period, with several control planes looking', async () => {
    const { projectId, budgetId } = await setup('thresholds', { scope: 'project', limit_usd: 2, period: 'total', alert_at: [0.5, 0.9, 1] });
    const hook = await h.api('POST', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken, body: { url: `${receiver.base}/budget`, events: ['budget.threshold'] } });
    expect(hook.status, hook.text).toBe(201);
    // $1.20 spent: 50 % reached, 90 % not.
    await h.redis.hset(keys.budgetLedger(projectId, budgetId, 'total'), 'spent', 1_200_000_000);
    // Two more control planes' keepers (each with its own metrics registry), looking together.
    const others = [new BudgetKeeper({ ...h.cp.ctx, metrics: new Registry() }), new BudgetKeeper({ ...h.cp.ctx, metrics: new Registry() })];
    for (let i = 0; i < 3; i++) await Promise.all(others.map((k) => k.run(Date.now(), true)));
    await eventually('the event delivered', () => (receiver.at('/budget').length > 0 ? true : undefined));
    await sleep(300);
    const bodies = receiver.at('/budget').map((r) => JSON.parse(r.body));
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ type: 'budget.threshold', data: { budget_id: budgetId, threshold: 0.5, limit_usd: 2, spent_usd: 1.2, period: 'total', resets_at: null } });
    const rows = await h.sql`select fraction from budget_thresholds where budget_id = ${budgetId}`;
    expect(rows.map((r) => r.fraction)).toEqual([0.5]);
    // Spend and limit per budget, as gauges.
    const metrics = await eventually('the gauges set', async () => {
      const text = await h.cp.ctx.metrics.metrics();
      return text.includes(`gateway_budget_spent_usd{project_id="${projectId}",budget_id="${budgetId}",scope="project"} 1.2`) ? text : undefined;
    });
    expect(metrics).toContain(`gateway_budget_limit_usd{project_id="${projectId}",budget_id="${budgetId}",scope="project"} 2`);
  });

  it('starts ledgers Redis lost from the usage records, then marks the Redis loaded', async () => {
    const projectId = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'rebuild' } })).body.id;
    const keyId = (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name: 'k' } })).body.id;
    const made = await h.api('POST', `/v1/projects/${projectId}/budgets`, { token: h.adminToken, body: { scope: 'key', key_id: keyId, limit_usd: 5, period: 'month' } });
    expect(made.status, made.text).toBe(201);
    const budgetId = made.body.id as string;
    const now = Date.now();
    await h.sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, latency_ms, finish_reason, stream, cost_usd)
      values (${now}, gen_random_uuid(), 'r1', ${projectId}, ${keyId}, 'm', 'p', 1, 1, 2, 1, 'stop', false, 0.25),
             (${now}, gen_random_uuid(), 'r2', ${projectId}, ${keyId}, 'm', 'p', 1, 1, 2, 1, 'stop', false, 0.125),
             (${now - 62 * 86_400_000}, gen_random_uuid(), 'r3', ${projectId}, ${keyId}, 'm', 'p', 1, 1, 2, 1, 'stop', false, 9)`;
    // Redis restarted empty: no ledger, no marker.
    for (const key of await h.redis.keys(`${h.prefix}budget*`)) await h.redis.del(key);
    expect(await h.redis.exists(keys.budgetLedgersReady)).toBe(0);
    await eventually('the marker set again', async () => ((await h.redis.exists(keys.budgetLedgersReady)) === 1 ? true : undefined));
    const ledgers = await h.redis.keys(`${keys.budgetLedger(projectId, budgetId, '')}*`);
    expect(ledgers).toHaveLength(1);
    expect(await h.redis.hget(ledgers[0]!, 'spent')).toBe('375000000');
  });
});
