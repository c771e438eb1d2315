import type { ISql } from 'postgres';
import type { Db } from '../db/connect.js';
import type { QuotaCrossing } from '../webhooks/quota-events.js';
import { isConnectionLost, isDataError } from './postgres-errors.js';
import { emptyAuditRows, emptyUsageRows, pickRow, rowCount, type AuditRows, type RejectedRecord, type UsageRows } from './record-rows.js';

export interface WriteResult {
  usageInserted: number;
  auditInserted: number;
  /** Records Postgres refused (data errors), found by writing the batch row by row. */
  rejected: RejectedRecord[];
  /** Quota thresholds this batch's usage reached first (quota_thresholds rows it inserted). */
  quotaCrossings: QuotaCrossing[];
  /** Projects with failed gateway requests this batch put in webhook_failed_requests. */
  failedRequestProjects: string[];
}

/** The pool, a transaction or a reserved connection. */
type Q = ISql<Record<string, never>>;

/**
 * Array parameters are sent as literals built here and cast in SQL. postgres.js would quote and
 * regex-escape every element; ids and numbers need neither, and this is the writer's hottest loop.
 */
function plainArray(values: readonly (number | string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out += (i === 0 ? '' : ',') + (v === null || v === undefined ? 'NULL' : v);
  }
  return `${out}}`;
}

function boolArray(values: readonly boolean[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) out += (i === 0 ? '' : ',') + (values[i] ? 't' : 'f');
  return `${out}}`;
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPE = /["\\]/g;

function textArray(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out += i === 0 ? '' : ',';
    if (v === null || v === undefined) out += 'NULL';
    else out += `"${NEEDS_ESCAPE.test(v) ? v.replace(ESCAPE, '\\$&') : v}"`;
  }
  return `${out}}`;
}

/** The newest record time per key used by gateway traffic in this batch. */
function keyLastUse(usage: UsageRows, audit: AuditRows): Map<string, number> {
  const last = new Map<string, number>();
  const see = (keyId: string | null, ts: number) => {
    if (keyId === null) return;
    const prev = last.get(keyId);
    if (prev === undefined || ts > prev) last.set(keyId, ts);
  };
  usage.keyId.forEach((k, i) => see(k, usage.ts[i] as number));
  audit.keyId.forEach((k, i) => {
    // Served requests only: a deleted key's refused requests must not look like traffic, since
    // rotating a key means waiting until the old one is no longer used before deleting it.
    if (audit.type[i] === 'gateway.request' && audit.outcome[i] === 'success') see(k, audit.ts[i] as number);
  });
  return last;
}

/**
 * Locks, in id order, the projects and keys about to be updated, so every writer acquires them in
 * the same order whatever its batch holds. Taken after the inserts, so concurrent batches insert
 * in parallel and queue only for the short counter updates.
 */
function lockCounters(q: Q, projectIds: readonly string[], keyIds: readonly string[]) {
  const locks = [];
  if (projectIds.length > 0) locks.push(q`select 1 from projects where id = any(${plainArray(projectIds)}::uuid[]) order by id for update`);
  if (keyIds.length > 0) locks.push(q`select 1 from api_keys where id = any(${plainArray(keyIds)}::uuid[]) order by id for update`);
  return locks;
}

/** What insertUsage returns: per project and UTC month of the records (`m202611`). */
interface InsertedUsage {
  project_id: string;
  period: string;
  tokens: string;
  n: number;
}

/** Tokens inserted by this batch, per project and per (project, month). */
interface InsertedTokens {
  projects: Map<string, number>;
  periods: Map<string, { projectId: string; period: string; tokens: number }>;
}

/** Inserts the usage rows; returns, per project and month, the tokens and count of the rows it inserted. */
function insertUsage(q: Q, rows: UsageRows) {
  return q<InsertedUsage[]>`
    with ins as (
      insert into usage_records (ts, id, request_id, project_id, key_id, model, provider, input_tokens, output_tokens,
                                 total_tokens, cached_tokens, cost_usd, latency_ms, finish_reason, provider_finish_reason,
                                 stream, endpoint, cache_write_tokens, tags, end_user, cache_hit, saved_usd, requested_model, batch_id)
      select * from unnest(
        ${plainArray(rows.ts)}::int8[], ${plainArray(rows.id)}::uuid[], ${textArray(rows.requestId)}::text[],
        ${plainArray(rows.projectId)}::uuid[], ${plainArray(rows.keyId)}::uuid[], ${textArray(rows.model)}::text[],
        ${textArray(rows.provider)}::text[], ${plainArray(rows.inputTokens)}::int4[], ${plainArray(rows.outputTokens)}::int4[],
        ${plainArray(rows.totalTokens)}::int4[], ${plainArray(rows.cachedTokens)}::int4[], ${plainArray(rows.costUsd)}::numeric[],
        ${plainArray(rows.latencyMs)}::int4[], ${textArray(rows.finishReason)}::text[], ${textArray(rows.providerFinishReason)}::text[],
        ${boolArray(rows.stream)}::bool[], ${textArray(rows.endpoint)}::text[], ${plainArray(rows.cacheWriteTokens)}::int4[],
        ${textArray(rows.tags)}::jsonb[], ${textArray(rows.endUser)}::text[], ${boolArray(rows.cacheHit)}::bool[],
        ${plainArray(rows.savedUsd)}::numeric[], ${textArray(rows.requestedModel)}::text[], ${textArray(rows.batchId)}::text[])
      on conflict do nothing
      returning project_id, total_tokens, ts
    )
    select project_id, 'm' || to_char(to_timestamp(ts / 1000.0) at time zone 'UTC', 'YYYYMM') as period,
           sum(total_tokens)::text as tokens, count(*)::int as n
    from ins group by 1, 2`;
}

/**
 * unnest() of a two-dimensional array yields its elements one by one, and Postgres arrays cannot
 * be ragged besides: each event's providers travel as one array literal, cast back per row.
 *
 * Failed gateway requests (outcome `error`) of a project with an enabled webhook subscribed to
 * gateway.request.failed, and requests a guardrail blocked (guardrail.blocked), also wait in
 * webhook_failed_requests for their project's next event;
 * only rows this statement inserted count, so a replayed batch reports nothing twice.
 */
function insertAudit(q: Q, rows: AuditRows) {
  return q<{ inserted: number; projects: string | null }[]>`
    with ins as (
    insert into audit_events (ts, id, request_id, type, outcome, status, error_code, project_id, key_id,
                              actor, model, provider, endpoint, attempts, providers, client_ip, user_agent, latency_ms, mcp, count, skipped,
                              tags, end_user, cache, guardrails, batch_id)
    select ts, id, request_id, type, outcome, status, error_code, project_id, key_id,
           actor, model, provider, endpoint, attempts, providers::text[], client_ip, user_agent, latency_ms, mcp, count, skipped::text[],
           tags, end_user, cache, guardrails, batch_id
    from unnest(
      ${plainArray(rows.ts)}::int8[], ${plainArray(rows.id)}::uuid[], ${textArray(rows.requestId)}::text[],
      ${textArray(rows.type)}::text[], ${textArray(rows.outcome)}::text[], ${plainArray(rows.status)}::int2[],
      ${textArray(rows.errorCode)}::text[], ${plainArray(rows.projectId)}::uuid[], ${plainArray(rows.keyId)}::uuid[],
      ${plainArray(rows.actor)}::uuid[], ${textArray(rows.model)}::text[], ${textArray(rows.provider)}::text[],
      ${textArray(rows.endpoint)}::text[], ${plainArray(rows.attempts)}::int2[], ${textArray(rows.providers.map(textArray))}::text[],
      ${textArray(rows.clientIp)}::text[], ${textArray(rows.userAgent)}::text[], ${plainArray(rows.latencyMs)}::int4[],
      ${textArray(rows.mcp)}::jsonb[], ${plainArray(rows.count)}::int4[], ${textArray(rows.skipped.map(textArray))}::text[],
      ${textArray(rows.tags)}::jsonb[], ${textArray(rows.endUser)}::text[], ${textArray(rows.cache)}::text[], ${textArray(rows.guardrails)}::jsonb[],
      ${textArray(rows.batchId)}::text[])
      as r(ts, id, request_id, type, outcome, status, error_code, project_id, key_id,
           actor, model, provider, endpoint, attempts, providers, client_ip, user_agent, latency_ms, mcp, count, skipped,
           tags, end_user, cache, guardrails, batch_id)
    on conflict do nothing
    returning ts, id, request_id, type, outcome, status, error_code, project_id, key_id, model, provider, endpoint, guardrails
    ), waiting as (
      insert into webhook_failed_requests (project_id, audit_id, ts, request_id, status, error_code, model, provider, key_id, endpoint, kind, guardrails)
      select i.project_id, i.id, i.ts, i.request_id, i.status, i.error_code, i.model, i.provider, i.key_id, i.endpoint,
             case when i.outcome = 'error' then 'failed' else 'guardrail' end,
             case when i.outcome = 'error' then null
                  else array(select g->>'id' from jsonb_array_elements(i.guardrails) g where g->>'action' = 'block') end
      from ins i
      where i.type = 'gateway.request' and i.project_id is not null
        and ((i.outcome = 'error'
              and exists (select 1 from webhooks w where w.project_id = i.project_id and w.enabled and 'gateway.request.failed' = any (w.events)))
          or (i.guardrails @> '[{"action":"block"}]'::jsonb
              and exists (select 1 from webhooks w where w.project_id = i.project_id and w.enabled and 'guardrail.blocked' = any (w.events))))
      on conflict do nothing
      returning project_id
    )
    select (select count(*) from ins)::int as inserted, (select string_agg(distinct project_id::text, ',') from waiting) as projects`;
}

/** Sums what insertUsage returned per project and per (project, month). */
function addInserted(into: InsertedTokens, result: readonly InsertedUsage[]): number {
  let inserted = 0;
  for (const row of result) {
    const tokens = Number(row.tokens);
    into.projects.set(row.project_id, (into.projects.get(row.project_id) ?? 0) + tokens);
    const key = `${row.project_id} ${row.period}`;
    const period = into.periods.get(key) ?? { projectId: row.project_id, period: row.period, tokens: 0 };
    period.tokens += tokens;
    into.periods.set(key, period);
    inserted += row.n;
  }
  return inserted;
}

/**
 * The counter updates, locks first: used_tokens (and the month's count in project_usage_periods)
 * grows by the tokens of the rows just inserted, last_used_at moves forward only. A project's
 * month rows are written only under its project row's lock, so writers never deadlock on them.
 */
function updateCounters(q: Q, inserted: InsertedTokens, lastUse: Map<string, number>) {
  const tokens = inserted.projects;
  const projectIds = [...tokens.keys()].sort();
  const keyIds = [...lastUse.keys()].sort();
  const statements: Promise<unknown>[] = lockCounters(q, projectIds, keyIds);
  if (projectIds.length > 0) {
    statements.push(q`
      update projects p set used_tokens = p.used_tokens + v.tokens
      from unnest(${plainArray(projectIds)}::uuid[], ${plainArray(projectIds.map((id) => tokens.get(id) as number))}::int8[]) as v(id, tokens)
      where p.id = v.id`);
    const periods = [...inserted.periods.values()].sort((a, b) => (a.projectId + a.period < b.projectId + b.period ? -1 : 1));
    statements.push(q`
      insert into project_usage_periods (project_id, period, used_tokens)
      select * from unnest(${plainArray(periods.map((p) => p.projectId))}::uuid[], ${textArray(periods.map((p) => p.period))}::text[],
                           ${plainArray(periods.map((p) => p.tokens))}::int8[])
      on conflict (project_id, period) do update set used_tokens = project_usage_periods.used_tokens + excluded.used_tokens`);
  }
  if (keyIds.length > 0) {
    statements.push(q`
      update api_keys a set last_used_at = to_timestamp(v.ts / 1000.0)
      from unnest(${plainArray(keyIds)}::uuid[], ${plainArray(keyIds.map((id) => lastUse.get(id) as number))}::int8[]) as v(id, ts)
      where a.id = v.id and (a.last_used_at is null or a.last_used_at < to_timestamp(v.ts / 1000.0))`);
  }
  return statements;
}

/**
 * The quota thresholds reached, after the counters moved: for each project this batch charged,
 * its use in the period its quota counts now (all time from used_tokens, or this UTC month when
 * the batch has records in it), against 80 and 100 % of its quota. Late records of a month past
 * count in that month and announce nothing. A threshold row is inserted once (its primary key);
 * the rows inserted are the crossings to announce. Run under the projects' locks, so of several
 * writers exactly one sees each crossing.
 */
function crossedThresholds(q: Q, inserted: InsertedTokens) {
  const pairs: { projectId: string; period: string }[] = [...inserted.projects.keys()].map((projectId) => ({ projectId, period: 'total' }));
  for (const p of inserted.periods.values()) pairs.push({ projectId: p.projectId, period: p.period });
  return q<QuotaCrossing[]>`
    with v as (
      select * from unnest(${plainArray(pairs.map((p) => p.projectId))}::uuid[], ${textArray(pairs.map((p) => p.period))}::text[]) as v(project_id, period)
    ), used as (
      select p.id as project_id, v.period, p.quota_tokens,
             case when v.period = 'total' then p.used_tokens else coalesce(u.used_tokens, 0) end as used_tokens
      from v join projects p on p.id = v.project_id
      left join project_usage_periods u on u.project_id = v.project_id and u.period = v.period
      where p.quota_tokens > 0 and p.deleted_at is null
        and (p.quota_period = 'total' and v.period = 'total'
             or p.quota_period = 'month' and v.period = 'm' || to_char(now() at time zone 'UTC', 'YYYYMM'))
    )
    insert into quota_thresholds (project_id, period, threshold, quota_tokens, used_tokens)
    select u.project_id, u.period, t.threshold, u.quota_tokens, u.used_tokens
    from used u cross join (values (80), (100)) as t(threshold)
    where u.used_tokens * 100 >= u.quota_tokens * t.threshold
    on conflict do nothing
    returning project_id, period, threshold, quota_tokens::text as quota_tokens`;
}

export interface WriteOptions {
  /** A batch takes milliseconds; one that has not settled in this long is on a connection that is gone. */
  timeoutMs?: number;
  /** Aborted when the pool is replaced: the write gives up at once. */
  signal?: AbortSignal;
}

const WRITE_TIMEOUT_MS = 15_000;

/**
 * Writes one batch in one transaction, so that retrying it after any failure (Postgres gone
 * mid-commit, the writer killed, a stalled job picked up by another writer) changes nothing:
 *
 * - records are inserted with `on conflict do nothing` on the primary key (ts, id), both fixed
 *   when the proxy made the record;
 * - projects.used_tokens grows by the total_tokens of the usage rows this statement actually
 *   inserted (its `returning`), so a replayed record adds nothing;
 * - api_keys.last_used_at moves forward only (greatest), which is idempotent by nature.
 *
 * Rows of projects and then api_keys are locked in id order before they are updated, so writers
 * running side by side queue behind each other instead of deadlocking.
 */
export async function writeBatch(sql: Db, usage: UsageRows, audit: AuditRows, options: WriteOptions = {}): Promise<WriteResult> {
  if (rowCount(usage) === 0 && rowCount(audit) === 0) return { usageInserted: 0, auditInserted: 0, rejected: [], quotaCrossings: [], failedRequestProjects: [] };
  const limits = { timeoutMs: options.timeoutMs ?? WRITE_TIMEOUT_MS, signal: options.signal };
  try {
    return await writePipelined(sql, usage, audit, limits);
  } catch (err) {
    if (!isDataError(err)) throw err;
    return writeRowByRow(sql, usage, audit, limits);
  }
}

interface Limits {
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

/** Awaits statements sent together; the first failure is the cause, later ones only echo it. */
async function settle(statements: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(statements);
  const failure = settled.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/** A write given up: it did not settle in time, or its pool was replaced. */
class WriteAbandoned extends Error {
  constructor(
    readonly code: 'WRITE_TIMEOUT' | 'POOL_REPLACED',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The transaction in two round trips on one reserved connection: begin and the inserts are sent
 * together, then the locks, counter updates and commit. Postgres runs pipelined statements in
 * order; after a failure the rest fail too and the transaction is rolled back whole.
 *
 * postgres.js 3.4 must not be sent anything on a connection that has closed (the write throws
 * from a timer, outside any promise, or hangs), nor be handed such a connection back (the pool
 * would reuse it). So the second round trip is sent only when the first succeeded, and after a
 * lost connection nothing is sent and the connection is not released; the pool is replaced
 * (WriterDb.renew) before the next batch.
 */
async function writePipelined(sql: Db, usage: UsageRows, audit: AuditRows, limits: Limits): Promise<WriteResult> {
  let abandoned: WriteAbandoned | null = null;
  const work = (async (): Promise<WriteResult> => {
    const q = await sql.reserve();
    if (abandoned) {
      q.release();
      throw abandoned;
    }
    let open = false;
    let lost = false;
    try {
      const begin = q`begin`;
      open = true;
      const usageInsert = rowCount(usage) > 0 ? insertUsage(q, usage) : null;
      const auditInsert = rowCount(audit) > 0 ? insertAudit(q, audit) : null;
      await settle([begin, ...(usageInsert ? [usageInsert] : []), ...(auditInsert ? [auditInsert] : [])]);
      if (abandoned) throw abandoned;
      const inserted: InsertedTokens = { projects: new Map(), periods: new Map() };
      const usageInserted = usageInsert ? addInserted(inserted, await usageInsert) : 0;
      const thresholds = inserted.projects.size > 0 ? crossedThresholds(q, inserted) : null;
      await settle([...updateCounters(q, inserted, keyLastUse(usage, audit)), ...(thresholds ? [thresholds] : []), q`commit`]);
      open = false;
      const auditResult = auditInsert ? (await auditInsert)[0] : undefined;
      return {
        usageInserted,
        auditInserted: auditResult?.inserted ?? 0,
        rejected: [],
        quotaCrossings: thresholds ? [...(await thresholds)] : [],
        failedRequestProjects: auditResult?.projects ? auditResult.projects.split(',') : [],
      };
    } catch (err) {
      lost = abandoned !== null || isConnectionLost(err);
      // A live connection handed back mid-transaction would run the next batch inside this one.
      if (open && !lost) await q`rollback`.catch((rollbackErr: unknown) => (lost = isConnectionLost(rollbackErr)));
      throw err;
    } finally {
      if (!lost) q.release();
    }
  })();
  // The losing side of the race settles later on its own; its outcome is already decided here.
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    const abandon = (reason: WriteAbandoned) => {
      abandoned ??= reason;
      reject(abandoned);
    };
    timer = setTimeout(() => abandon(new WriteAbandoned('WRITE_TIMEOUT', `batch write did not finish within ${limits.timeoutMs} ms`)), limits.timeoutMs);
    onAbort = () => abandon(new WriteAbandoned('POOL_REPLACED', 'the connection pool was replaced during the write'));
    if (limits.signal?.aborted) onAbort();
    else limits.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, giveUp]);
  } finally {
    clearTimeout(timer);
    if (onAbort) limits.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The slow path for a batch Postgres refused as a whole although every record passed the
 * checks: each record is written in a transaction of its own (with its counters), and the ones
 * refused are reported. Records written before a failure stay written; the retry skips them.
 */
async function writeRowByRow(sql: Db, usage: UsageRows, audit: AuditRows, limits: Limits): Promise<WriteResult> {
  const rejected: RejectedRecord[] = [];
  let usageInserted = 0;
  let auditInserted = 0;
  const quotaCrossings: QuotaCrossing[] = [];
  const failedRequestProjects = new Set<string>();
  const none = { usage: emptyUsageRows(), audit: emptyAuditRows() };
  for (let i = 0; i < rowCount(usage); i++) {
    try {
      const written = await writePipelined(sql, pickRow(usage, i), none.audit, limits);
      usageInserted += written.usageInserted;
      quotaCrossings.push(...written.quotaCrossings);
    } catch (err) {
      if (!isDataError(err)) throw err;
      rejected.push({ table: 'usage_records', id: usage.id[i] ?? null, reason: postgresReason(err) });
    }
  }
  for (let i = 0; i < rowCount(audit); i++) {
    try {
      const written = await writePipelined(sql, none.usage, pickRow(audit, i), limits);
      auditInserted += written.auditInserted;
      for (const projectId of written.failedRequestProjects) failedRequestProjects.add(projectId);
    } catch (err) {
      if (!isDataError(err)) throw err;
      rejected.push({ table: 'audit_events', id: audit.id[i] ?? null, reason: postgresReason(err) });
    }
  }
  return { usageInserted, auditInserted, rejected, quotaCrossings, failedRequestProjects: [...failedRequestProjects] };
}

function postgresReason(err: unknown): string {
  const e = err as { code?: string };
  return `postgres refused the row (SQLSTATE ${e.code ?? 'unknown'})`;
}
