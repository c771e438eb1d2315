import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { encodeProjectBudgets } from '@gateway/shared';
import { userAgent, type RunContext } from '../harness/context.js';
import { projectKey } from '../harness/keys.js';
import { formatInt, progress } from '../harness/progress.js';
import { rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService, type Target } from '../harness/stack.js';
import { rotations } from '../harness/stats.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult, type TargetLoad } from './throughput.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * What a dollar budget costs a request (docs/budgets.md; target ≤ +10 µs CPU): one gateway, a
 * priced model, two projects with every other feature on (FULL_POLICY), one of them with a
 * project budget far above what a run spends, measured at saturation in rotated rounds on the same
 * process. The budget's requests reserve their worst case from the proxy's dollar lease and settle
 * locally; its Redis traffic is one lease call per block and one settlement write per 100 ms.
 */
type Variant = 'no-budget' | 'budget';
const VARIANTS: readonly Variant[] = ['no-budget', 'budget'];
const LABEL: Record<Variant, string> = { 'no-budget': 'without a budget', budget: 'under a project budget' };

function pricedProviders(ctx: RunContext, upstream: string): string {
  const file = join(ctx.tmpDir, `providers-budgets-${upstream.replace(/\D/g, '')}.json`);
  const model = { id: BENCH_MODEL, price: { input: 0.15, output: 0.6 } };
  writeFileSync(file, JSON.stringify({ providers: [{ name: 'bench', type: 'openai', base_url: `${upstream}/v1`, models: [model], timeout_ms: 300_000, idle_timeout_ms: 300_000 }] }));
  return file;
}

export const budgets: Scenario = {
  name: 'budgets',
  title: 'Dollar budgets: a request under a budget vs the same without',
  async run(ctx: RunContext): Promise<ScenarioOutcome> {
    const plain = await projectKey(ctx.redis, ctx.keys);
    const budgeted = await projectKey(ctx.redis, ctx.keys);
    // Projected as the control plane does, with its ledgers marked loaded (no control plane here).
    const rule = { id: randomUUID(), scope: 'project' as const, key_id: null, tag: null, limit_usd: 1e9, period: 'total', timezone: 'UTC', alert_at: [], created_at: Date.now() };
    await ctx.redis.set(ctx.keys.projectBudgets(budgeted.projectId), encodeProjectBudgets(budgeted.projectId, [rule]));
    await ctx.redis.set(ctx.keys.budgetLedgersReady, String(Date.now()));
    const ua = userAgent('budgets');
    const mock = await startMock(ctx);
    let gateway: GatewayService | null = null;
    const rounds = new Map<Variant, CpuLoadResult[]>(VARIANTS.map((v) => [v, []]));
    try {
      gateway = await startGateway(ctx, mock.origin, 'budgets', { providersFile: pricedProviders(ctx, mock.origin) });
      const gw = gateway;
      const target = (v: Variant): Target => ({ name: v, origin: gw.origin, key: v === 'budget' ? budgeted.key : plain.key, model: BENCH_MODEL });
      const warm = sized(ctx, 3, 1);
      for (const v of VARIANTS) {
        progress(`budgets: warming ${v} (${warm} s)`);
        await saturate(target(v), gw.child.pid, ctx, warm, ua);
      }
      for (const [r, order] of rotations(VARIANTS, ctx.options.rounds).entries()) {
        for (const v of order) {
          const result = await saturate(target(v), gw.child.pid, ctx, ctx.options.durationS, ua);
          rounds.get(v)?.push(result);
          progress(`budgets: round ${r + 1} ${v}: ${formatInt(result.rps)} req/s, ${Math.round(result.cpuUsPerRequest)} µs CPU/request, ${loadErrors(result)} errors`);
        }
      }
    } finally {
      await gateway?.stop();
      await mock.stop();
    }
    // The budgeted requests went through the budget: its ledger holds what they cost.
    const spentNanos = Number((await ctx.redis.hget(ctx.keys.budgetLedger(budgeted.projectId, rule.id, 'total'), 'spent')) ?? 0);
    const load = Object.fromEntries(VARIANTS.map((v) => [v, summariseTarget(rounds.get(v) ?? [])])) as Record<Variant, TargetLoad>;
    const base = load['no-budget'];
    const added = load.budget.medianCpuUsPerRequest - base.medianCpuUsPerRequest;
    const rows: Row[] = [];
    for (const v of VARIANTS) {
      rows.push({ figure: `${LABEL[v]}: req/s, median of ${ctx.options.rounds} × ${ctx.options.durationS} s`, gateway: rps(load[v].medianRps), result: '', verdict: 'info' });
      rows.push({ figure: `${LABEL[v]}: CPU per request, own process`, gateway: us(load[v].medianCpuUsPerRequest), result: v === 'budget' ? `${signedUs(added)} vs without` : 'baseline', verdict: 'info' });
    }
    rows.push({ figure: 'budget: spend settled in its ledger', gateway: `$${(spentNanos / 1e9).toFixed(4)}`, result: spentNanos > 0 ? 'requests were charged' : 'nothing charged', verdict: spentNanos > 0 ? 'pass' : 'miss' });
    rows.push({ figure: 'budget: CPU added per request (target ≤ +10 µs)', gateway: signedUs(added), result: added <= 10 ? 'within target' : 'over target', verdict: added <= 10 ? 'pass' : 'miss' });
    return {
      errors: VARIANTS.reduce((n, v) => n + load[v].errors, 0) + (spentNanos > 0 ? 0 : 1),
      rows,
      data: { connections: ctx.options.connections, durationS: ctx.options.durationS, rounds: ctx.options.rounds, variants: load, cpuUsPerRequestAdded: added, spentUsd: spentNanos / 1e9 },
    };
  },
};
