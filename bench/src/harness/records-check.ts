import type { RunContext } from './context.js';
import { connect, freshDatabase } from './database.js';
import { spawnNode, sleep, waitForOutput } from './processes.js';
import { formatInt, progress } from './progress.js';
import type { Row, ScenarioResult } from './report.js';
import { queueDepth } from './queue.js';

/**
 * DESIGN §6: the writer is stopped while figures are taken; afterwards it drains the queue into
 * a throwaway database and every record of the measured windows must be there. Expected counts
 * come from each gateway's own request counter, scraped just before it stopped; landed counts are
 * grouped by the User-Agent each scenario sent, so a loss is traced to its scenario.
 */
const STALL_MS = 30_000;
const LIMIT_MS = 20 * 60_000;

export async function checkRecordsLand(ctx: RunContext): Promise<ScenarioResult | null> {
  const expected = [...ctx.ledger.values()].reduce((s, t) => ({ requests: s.requests + t.requests, routed: s.routed + t.routed, dropped: s.dropped + t.dropped }), { requests: 0, routed: 0, dropped: 0 });
  if (expected.requests === 0) return null;
  const started = Date.now();
  const db = freshDatabase(ctx.options.databaseUrl, 'records');
  await db.create();
  const writer = spawnNode('writer', 'control-plane/dist/writer-main.js', [], {
    env: { DATABASE_URL: db.url, REDIS_URL: ctx.redisUrl, REDIS_PREFIX: ctx.prefix, WRITER_PORT: '0', LOG_LEVEL: 'info' },
  });
  const sql = connect(db.url);
  let audit = 0;
  let usage = 0;
  let drainedS = Number.NaN;
  let depth = { waiting: 0, active: 0, failed: 0 };
  const byScenario = new Map<string, number>();
  try {
    await waitForOutput(writer, /"msg":"writer started"/, 60_000);
    progress(`records: writer draining ${formatInt(expected.requests)} audit events and ${formatInt(expected.routed)} usage records into ${db.name}`);
    const t0 = Date.now();
    let lastDepth = -1;
    let lastChange = Date.now();
    let lastReport = Date.now();
    // Counting rows is a scan of a growing table; while jobs wait, the queue's depth says enough.
    const count = async () => {
      const [row] = await sql<{ audit: number; usage: number }[]>`
        select (select coalesce(sum(count), 0) from audit_events where type in ('gateway.request', 'gateway.throttled'))::int as audit,
               (select count(*) from usage_records)::int as usage`;
      audit = row?.audit ?? 0;
      usage = row?.usage ?? 0;
    };
    for (;;) {
      depth = await queueDepth(ctx.redis, ctx.keys);
      const pending = depth.waiting + depth.active;
      const now = Date.now();
      if (pending === 0) {
        await count();
        if (audit >= expected.requests && usage >= expected.routed) {
          drainedS = (Date.now() - t0) / 1000;
          break;
        }
      }
      if (pending !== lastDepth) {
        lastDepth = pending;
        lastChange = now;
      }
      if (now - lastChange > STALL_MS || now - t0 > LIMIT_MS) {
        await count();
        progress(`records: the writer stopped making progress (${formatInt(audit)} audit, ${formatInt(usage)} usage; queue ${pending} pending, ${depth.failed} failed)`);
        break;
      }
      if (now - lastReport > 5_000) {
        progress(`records: ${formatInt(pending)} batches still queued`);
        lastReport = now;
      }
      await sleep(pending === 0 ? 1_000 : 500);
    }
    const groups = await sql<{ ua: string | null; n: number }[]>`
      select user_agent as ua, sum(count)::int as n from audit_events where type in ('gateway.request', 'gateway.throttled') group by user_agent`;
    for (const g of groups) {
      const scenario = (g.ua ?? '').split('/')[1] ?? '(none)';
      byScenario.set(scenario, (byScenario.get(scenario) ?? 0) + g.n);
    }
  } finally {
    await sql.end({ timeout: 1 });
    await writer.stop();
    await db.drop();
  }
  // A scenario may run several gateways (`throughput` and `throughput-workers`, say), all sending
  // the scenario's User-Agent: their tallies are summed under it.
  const uaOf = (name: string) => [...byScenario.keys()].filter((ua) => name === ua || name.startsWith(`${ua}-`)).sort((a, b) => b.length - a.length)[0] ?? name;
  const perScenario: Record<string, { expected: number; landed: number; routed: number; dropped: number }> = {};
  for (const [name, t] of ctx.ledger) {
    const ua = uaOf(name);
    const entry = (perScenario[ua] ??= { expected: 0, landed: byScenario.get(ua) ?? 0, routed: 0, dropped: 0 });
    entry.expected += t.requests;
    entry.routed += t.routed;
    entry.dropped += t.dropped;
  }
  const mismatched = Object.entries(perScenario).filter(([, v]) => v.expected !== v.landed).map(([k]) => k);
  const allLanded = audit === expected.requests && usage === expected.routed && expected.dropped === 0 && depth.failed === 0;
  const rows: Row[] = [
    {
      figure: 'audit events landed / requests the gateways finished',
      gateway: `${formatInt(audit)} / ${formatInt(expected.requests)}`,
      result: mismatched.length === 0 ? 'every scenario complete' : `short in ${mismatched.join(', ')}`,
      verdict: audit === expected.requests && mismatched.length === 0 ? 'pass' : 'miss',
    },
    {
      figure: 'usage records landed / requests routed to the provider',
      gateway: `${formatInt(usage)} / ${formatInt(expected.routed)}`,
      result: `records dropped by the gateways: ${expected.dropped}; failed batches: ${depth.failed}`,
      verdict: usage === expected.routed && expected.dropped === 0 ? 'pass' : 'miss',
    },
    {
      figure: 'queue drained afterwards by one writer',
      result: Number.isFinite(drainedS) ? `${drainedS.toFixed(1)} s (${formatInt((audit + usage) / Math.max(drainedS, 0.001))} records/s, not a writer figure)` : 'did not finish',
      verdict: 'info',
    },
  ];
  return {
    name: 'records',
    title: 'Every record of the measured windows lands in PostgreSQL',
    status: 'ok',
    durationS: (Date.now() - started) / 1000,
    errors: allLanded ? 0 : 1,
    rows,
    data: { expectedAudit: expected.requests, landedAudit: audit, expectedUsage: expected.routed, landedUsage: usage, droppedByGateways: expected.dropped, failedBatches: depth.failed, drainedS, perScenario },
  };
}
