import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditListQuery } from '../src/db/audit.js';
import type { Db } from '../src/db/connect.js';
import type { PageQuery } from '../src/db/record-page.js';
import { ensurePartitions } from '../src/db/partitions.js';
import { usageListQuery } from '../src/db/usage.js';
import { usageSummaryQuery, type SummaryQuery } from '../src/db/usage-summary.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The list queries on enough rows that a sequential scan would be the planner's choice if an
 * index could not serve them: each must walk an index in (ts, id) order and stop after a page.
 */
let h: Harness;
let db: Db;
// Many tenants, as in production: each holds a small share of the rows, so walking the primary
// key and filtering out the others' rows would read many pages for one page of results.
const PROJECT_COUNT = 50;
const PROJECTS = Array.from({ length: PROJECT_COUNT }, () => randomUUID());
const ROWS = 60_000;
const DAY = 86_400_000;

/**
 * The times the summary's range ends at: the real clock, and the days on which a range reaches
 * back over a month's or a year's end (a range is built from its "now", never from the calendar
 * the suite happens to run on).
 */
const REFERENCE_NOWS = [
  Date.now(),
  Date.UTC(2027, 2, 1, 0, 5), // the first day of a month, minutes after midnight
  Date.UTC(2027, 1, 28, 23, 55), // the last day of a month
  Date.UTC(2028, 0, 1, 0, 10), // a year's first minutes, the range reaching back into the old year
];

beforeAll(async () => {
  h = await startHarness('explain');
  db = h.sql as unknown as Db;
  // The partitions the control plane would have made at each reference time (last month to two
  // months ahead), before any row: a month's rows already in the default partition keep it out.
  for (const now of REFERENCE_NOWS) await ensurePartitions(db, now);
  // Around each reference time, rows spread over its partitions and over the default one (older
  // records).
  for (const reference of REFERENCE_NOWS) {
    const now = new Date(reference);
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1);
    const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 3, 1);
    const step = Math.floor((end - start) / ROWS);
    await h.sql`
      insert into usage_records
      select ${start}::bigint + g * ${step}::bigint, gen_random_uuid(), 'req-' || g, (${PROJECTS}::uuid[])[1 + g % ${PROJECT_COUNT}], gen_random_uuid(),
        case when g % 3 = 0 then 'gpt-4o-mini' else 'mock-1' end, 'mock', 3, 5, 8, 10, 'stop', false
      from generate_series(1, ${ROWS}) g`;
    await h.sql`
      insert into audit_events (ts, id, request_id, type, outcome, status, project_id, latency_ms)
      select ${start}::bigint + g * ${step}::bigint, gen_random_uuid(), 'req-' || g, 'gateway.request',
        case when g % 7 = 0 then 'auth_failed' else 'success' end, 200,
        case when g % 50 = 0 then null else (${PROJECTS}::uuid[])[1 + g % ${PROJECT_COUNT}] end, 10
      from generate_series(1, ${ROWS}) g`;
  }
  await h.sql`analyze usage_records`;
  await h.sql`analyze audit_events`;
});
afterAll(async () => h?.close());

interface PlanNode {
  'Node Type': string;
  'Subplans Removed'?: number;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

async function plan(query: ReturnType<typeof usageListQuery | typeof usageSummaryQuery>): Promise<PlanNode> {
  const [row] = await h.sql`explain (format json) ${query as never}`;
  return (row?.['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

/**
 * Only index scans read the table, and nothing sorts what they read except, for several
 * projects, the merge of their short per-project runs (at most projects × page rows).
 */
function expectIndexWalk(root: PlanNode, options: { index: RegExp; sortAbove?: string }) {
  const all = nodes(root);
  const summary = JSON.stringify(all.map((n) => [n['Node Type'], n['Index Name']]));
  const reads = all.filter((n) => n['Relation Name'] !== undefined);
  expect(reads.length, summary).toBeGreaterThan(0);
  for (const read of reads) {
    expect(['Index Scan', 'Index Only Scan'], summary).toContain(read['Node Type']);
    expect(read['Index Name'], summary).toMatch(options.index);
  }
  const sorts = all.filter((n) => n['Node Type'] === 'Sort');
  if (options.sortAbove === undefined) expect(sorts, summary).toEqual([]);
  else for (const sort of sorts) expect(nodes(sort).some((n) => n['Node Type'] === options.sortAbove), summary).toBe(true);
  return reads;
}

const page = (over: Partial<PageQuery>): PageQuery => ({ projectIds: null, order: 'desc', fetch: 51, after: null, from: undefined, to: undefined, ...over });

describe('list queries use the indexes', () => {
  const one = () => [PROJECTS[3] as string];
  const cursorAtNow = () => ({ ts: Date.now(), id: randomUUID() });

  it('one project: (project_id, ts, id), in both orders', async () => {
    expectIndexWalk(await plan(usageListQuery(db, page({ projectIds: one() }), {})), { index: /project_id_ts_id/ });
    expectIndexWalk(await plan(usageListQuery(db, page({ projectIds: one(), order: 'asc' }), { model: 'mock-1' })), { index: /project_id_ts_id/ });
    expectIndexWalk(await plan(auditListQuery(db, page({ projectIds: one() }), { outcome: 'auth_failed' })), { index: /project_id_ts_id/ });
  });

  it('later pages and time ranges: the cursor and bounds are index conditions, not filters', async () => {
    // With a cursor the planner may walk either (ts, id) index in a partition; both start at the cursor.
    for (const query of [
      usageListQuery(db, page({ projectIds: one(), after: cursorAtNow() }), {}),
      auditListQuery(db, page({ projectIds: one(), order: 'asc', after: cursorAtNow() }), {}),
      usageListQuery(db, page({ projectIds: one(), from: Date.now() - 40 * DAY, to: Date.now() + 40 * DAY }), {}),
    ]) {
      const reads = expectIndexWalk(await plan(query), { index: /project_id_ts_id|pkey/ });
      for (const read of reads) expect(read['Index Cond']).toMatch(/ts [<>]=? /);
    }
  });

  it('every project (account admins): the primary key (ts, id)', async () => {
    expectIndexWalk(await plan(usageListQuery(db, page({}), {})), { index: /pkey/ });
    expectIndexWalk(await plan(auditListQuery(db, page({ order: 'asc', after: cursorAtNow() }), { type: 'gateway.request' })), { index: /pkey/ });
  });

  it('several projects (a member of many): one bounded walk of (project_id, ts, id) per project', async () => {
    const options = { index: /project_id_ts_id/, sortAbove: 'Limit' };
    expectIndexWalk(await plan(usageListQuery(db, page({ projectIds: PROJECTS.slice(0, 5) }), {})), options);
    expectIndexWalk(await plan(auditListQuery(db, page({ projectIds: PROJECTS.slice(0, 5), after: cursorAtNow(), order: 'asc' }), {})), options);
  });

  it("one batch's records: (batch_id, ts, id), for one project, several or all", async () => {
    const batchId = 'batch_0192f3a45b6c7d8e';
    for (const projectIds of [one(), PROJECTS.slice(0, 5), null]) {
      const options = projectIds !== null && projectIds.length > 1 ? { index: /batch_id_ts_id/, sortAbove: 'Limit' } : { index: /batch_id_ts_id/ };
      expectIndexWalk(await plan(usageListQuery(db, page({ projectIds }), { batchId })), options);
      expectIndexWalk(await plan(auditListQuery(db, page({ projectIds, order: 'asc', after: cursorAtNow() }), { batchId })), options);
    }
  });

  it('several projects page like one: same rows, same order', async () => {
    const projects = PROJECTS.slice(0, 3);
    const merged = await h.sql`${usageListQuery(db, page({ projectIds: projects, fetch: 200 }), {}) as never}`;
    const direct = await h.sql`select id from usage_records where project_id in ${h.sql(projects)} order by ts desc, id desc limit 200`;
    expect(merged.map((r) => r.id)).toEqual(direct.map((r) => r.id));
  });
});

describe('the usage summary', () => {
  const summary = (over: Partial<SummaryQuery>): SummaryQuery => ({ projectIds: null, groupBy: 'model', from: undefined, to: undefined, ...over });
  const monthPartition = (ms: number) => {
    const d = new Date(ms);
    return `usage_records_p${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
  };

  /** The tables that hold a range's rows: each month's partition, or the default one where a month has none. */
  async function partitionsOf(range: { from: number; to: number }): Promise<string[]> {
    const months = new Set<string>();
    for (let t = range.from; t < range.to; t += DAY) months.add(monthPartition(t));
    months.add(monthPartition(range.to - 1));
    const made = await h.sql<{ relname: string }[]>`select relname from pg_class where relname in ${h.sql([...months])}`;
    const tables = made.map((r) => r.relname);
    if (tables.length < months.size) tables.push('usage_records_default');
    return tables;
  }

  /**
   * The rows are read through an index (a plain or a bitmap index scan, as the planner likes),
   * never a sequential scan, and only in the partitions of the time range.
   */
  async function expectPrunedIndexRead(root: PlanNode, range: { from: number; to: number }) {
    const all = nodes(root);
    const summaryText = JSON.stringify(all.map((n) => [n['Node Type'], n['Relation Name'], n['Index Name']]));
    const reads = all.filter((n) => n['Relation Name'] !== undefined);
    expect(reads.length, summaryText).toBeGreaterThan(0);
    for (const read of reads) expect(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan'], summaryText).toContain(read['Node Type']);
    // A partition the range barely touches (minutes of a new month) may be read by its (ts, id)
    // key instead, bounded by the range all the same.
    for (const index of all.filter((n) => n['Index Name'] !== undefined)) {
      expect(index['Index Name'], summaryText).toMatch(/project_id_ts_id|pkey/);
      if (/pkey/.test(index['Index Name'] as string)) expect(index['Index Cond'], summaryText).toMatch(/ts [<>]=? /);
    }
    const tables = await partitionsOf(range);
    for (const read of reads) expect(tables, summaryText).toContain(read['Relation Name']);
  }

  it('names the default partition for a month without one of its own, and only then', async () => {
    const now = REFERENCE_NOWS[3] as number;
    expect(await partitionsOf({ from: now - 10 * DAY, to: now })).toEqual(expect.not.arrayContaining(['usage_records_default']));
    expect(await partitionsOf({ from: now - 40 * DAY, to: now })).toContain('usage_records_default');
  });

  it.each(REFERENCE_NOWS.map((now) => [new Date(now).toISOString(), now]))('one project and a time range around %s: an index read of the partitions in the range only', async (_, now) => {
    const range = { from: now - 10 * DAY, to: now + 10 * DAY };
    for (const groupBy of ['model', 'key', 'endpoint'] as const) {
      await expectPrunedIndexRead(await plan(usageSummaryQuery(db, summary({ projectIds: [PROJECTS[3] as string], groupBy, ...range }), {})), range);
    }
    await expectPrunedIndexRead(await plan(usageSummaryQuery(db, summary({ projectIds: [PROJECTS[3] as string], ...range }), { model: 'mock-1', endpoint: 'chat.completions' })), range);
  });

  it.each(REFERENCE_NOWS.map((now) => [new Date(now).toISOString(), now]))('several projects, 40 days to %s: the same index, one condition for all of them', async (_, now) => {
    const range = { from: now - 40 * DAY, to: now };
    await expectPrunedIndexRead(await plan(usageSummaryQuery(db, summary({ projectIds: PROJECTS.slice(0, 3), groupBy: 'project', ...range }), {})), range);
  });

  it('adds up the same figures as the rows say', async () => {
    const range = { from: Date.now() - 40 * DAY, to: Date.now() + 40 * DAY };
    const rows = await h.sql`${usageSummaryQuery(db, summary({ projectIds: [PROJECTS[5] as string], ...range }), {}) as never}`;
    const [direct] = await h.sql`
      select count(*)::int as n, sum(total_tokens)::int as total from usage_records
      where project_id = ${PROJECTS[5] as string} and ts >= ${range.from} and ts < ${range.to}`;
    const totals = rows.find((r) => r.is_total);
    expect({ n: Number(totals?.requests), total: Number(totals?.total) }).toEqual(direct);
    expect(direct?.n).toBeGreaterThan(0);
  });
});
