import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { connect, freshDatabase } from '../harness/database.js';
import { keepAliveClient } from '../harness/http.js';
import { ROOT } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atMost, ms, type Row } from '../harness/report.js';
import { medianSummary, rotations, summarise, type Summary } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * GET /v1/usage over a million usage records: seeded with generate_series into a fresh database
 * (ten projects, three weeks of history), then sequential pages at c=1 with and without
 * project_id, first pages and pages reached by following next_cursor. The writer is not running.
 */
export const TARGET_P99_MS = 20;
const PROJECTS = 10;
const PAGE = 50;
const CURSOR_DEPTH = 20;

type Variant = 'all-first' | 'project-first' | 'all-cursor' | 'project-cursor';
const VARIANTS: Variant[] = ['all-first', 'project-first', 'all-cursor', 'project-cursor'];
const VARIANT_TEXT: Record<Variant, string> = {
  'all-first': 'every project, first page',
  'project-first': 'one project, first page',
  'all-cursor': `every project, cursor pages 2–${CURSOR_DEPTH}`,
  'project-cursor': `one project, cursor pages 2–${CURSOR_DEPTH}`,
};

async function seed(url: string, rows: number, projectIds: string[]): Promise<void> {
  const sql = connect(url);
  try {
    const now = Date.now();
    const spacing = Math.max(1, Math.floor((21 * 24 * 3600 * 1000) / rows));
    await sql`
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens, total_tokens, latency_ms, finish_reason, stream)
      select ${now}::bigint - g * ${spacing}::bigint, gen_random_uuid(), 'req_' || g, (${projectIds}::uuid[])[1 + g % ${projectIds.length}],
             gen_random_uuid(), (array['gpt-4o-mini','gpt-4o','claude-sonnet'])[1 + g % 3], 'bench-upstream',
             20 + g % 200, 50 + g % 400, 70 + g % 200 + g % 400, 100 + g % 900, 'stop', g % 2 = 0
      from generate_series(1, ${rows}) g`;
    await sql`analyze usage_records`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export const usageQuery: Scenario = {
  name: 'usage-query',
  title: 'GET /v1/usage p99 over 1M rows',
  async run(ctx): Promise<ScenarioOutcome> {
    if (!existsSync(join(ROOT, 'control-plane/src/http/routes/usage.ts')) || !existsSync(join(ROOT, 'control-plane/dist/main.js'))) {
      return { status: 'skipped', note: 'control-plane has no GET /v1/usage route yet', errors: 0, rows: [], data: {} };
    }
    const rows = sized(ctx, 1_000_000, 20_000);
    const perRound = sized(ctx, 300, 30);
    const db = freshDatabase(ctx.options.databaseUrl, 'usage');
    let cp: ControlPlane | null = null;
    const rounds = new Map<Variant, Summary[]>(VARIANTS.map((v) => [v, []]));
    let errors = 0;
    try {
      cp = await startControlPlane(ctx, db.url, `${ctx.prefix}usage:`);
      const projectIds: string[] = [];
      for (let i = 0; i < PROJECTS; i++) projectIds.push((await cp.call<{ id: string }>('POST', '/v1/projects', { name: `bench usage ${i}` }, 201)).id);
      progress(`usage-query: seeding ${formatInt(rows)} usage records`);
      const seeded = Date.now();
      await seed(db.url, rows, projectIds);
      progress(`usage-query: seeded in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
      const client = keepAliveClient(cp.origin);
      const headers = { authorization: `Bearer ${cp.token}` };
      const project = projectIds[0] as string;
      const cursors = new Map<Variant, { next: string | null; depth: number }>(VARIANTS.map((v) => [v, { next: null, depth: 0 }]));
      // Cursor variants: page 1 (untimed) yields the cursor; pages 2…CURSOR_DEPTH are timed, then again.
      const one = async (variant: Variant): Promise<number | null> => {
        const paging = variant.endsWith('cursor');
        const state = cursors.get(variant) as { next: string | null; depth: number };
        const params = new URLSearchParams({ limit: String(PAGE) });
        if (variant.startsWith('project')) params.set('project_id', project);
        if (paging && state.next !== null) params.set('cursor', state.next);
        const timed = !paging || state.next !== null;
        const t0 = process.hrtime.bigint();
        const res = await client.request({ path: `/v1/usage?${params}`, method: 'GET', headers });
        const page = (await res.body.json()) as { data?: unknown[]; next_cursor?: string | null };
        const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
        if (res.statusCode !== 200 || page.data?.length !== PAGE) errors++;
        if (paging) {
          state.depth = state.next === null ? 1 : state.depth + 1;
          state.next = state.depth >= CURSOR_DEPTH ? null : (page.next_cursor ?? null);
        }
        return timed ? elapsed : null;
      };
      const batch = async (variant: Variant, count: number) => {
        const samples: number[] = [];
        while (samples.length < count) {
          const elapsed = await one(variant);
          if (elapsed !== null) samples.push(elapsed);
          if (errors > 100) throw new Error('GET /v1/usage keeps failing');
        }
        return samples;
      };
      for (const variant of VARIANTS) await batch(variant, sized(ctx, 50, 10));
      const orders = rotations(VARIANTS, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const variant of order) {
          const s = summarise(await batch(variant, perRound));
          rounds.get(variant)?.push(s);
          progress(`usage-query: round ${r + 1}/${orders.length} ${variant}: p50 ${ms(s.p50)}, p99 ${ms(s.p99)}`);
        }
      }
      await client.close();
    } finally {
      await cp?.stop();
      await db.drop();
    }
    const med = Object.fromEntries([...rounds].map(([v, list]) => [v, medianSummary(list)])) as Record<Variant, Summary>;
    const table: Row[] = VARIANTS.map((v) => ({
      figure: `${VARIANT_TEXT[v]} (limit=${PAGE}, ${formatInt(rows)} rows) p50 / p99`,
      gateway: `${ms(med[v].p50)} / ${ms(med[v].p99)}`,
      result: '',
      target: `p99 ≤ ${TARGET_P99_MS} ms`,
      verdict: atMost(med[v].p99, TARGET_P99_MS),
    }));
    return { errors, rows: table, data: { rows, projects: PROJECTS, pageSize: PAGE, requestsPerRound: perRound, rounds: ctx.options.rounds, unit: 'ms', variants: med } };
  },
};
