import { AUDIT_OUTCOMES, FINISH_REASONS, type AuditEvent, type UsageRecord } from '@gateway/shared';

/**
 * Records as column arrays, the shape `insert … select * from unnest(…)` takes: one parameter
 * per column whatever the batch size, so a batch is one statement and one plan.
 *
 * Every record is checked here, before Postgres sees it: one record Postgres would refuse would
 * fail its whole batch on every retry, forever. A record that fails a check is left out and
 * reported, never fixed up, except for NUL characters, which text columns cannot store and which
 * only a client-supplied field (a user agent) could carry.
 */
export interface UsageRows {
  ts: number[];
  id: string[];
  requestId: string[];
  projectId: string[];
  keyId: string[];
  model: string[];
  provider: string[];
  inputTokens: number[];
  outputTokens: number[];
  totalTokens: number[];
  latencyMs: number[];
  finishReason: string[];
  stream: boolean[];
}

export interface AuditRows {
  ts: number[];
  id: string[];
  requestId: string[];
  type: string[];
  outcome: string[];
  status: number[];
  errorCode: (string | null)[];
  projectId: (string | null)[];
  keyId: (string | null)[];
  actor: (string | null)[];
  model: (string | null)[];
  provider: (string | null)[];
  clientIp: (string | null)[];
  userAgent: (string | null)[];
  latencyMs: number[];
}

export interface RejectedRecord {
  table: 'usage_records' | 'audit_events';
  /** The record's id when it has a usable one, for the log line; never the record itself. */
  id: string | null;
  reason: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT32_MAX = 2_147_483_647;
const SMALLINT_MAX = 32_767;
const finishReasons = new Set<string>(FINISH_REASONS);
const outcomes = new Set<string>(AUDIT_OUTCOMES);

class Invalid extends Error {}

function uuid(value: unknown, field: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new Invalid(`${field} is not a uuid`);
  return value;
}

function nullableUuid(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : uuid(value, field);
}

function int(value: unknown, field: string, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) throw new Invalid(`${field} is not an integer in 0..${max}`);
  return value;
}

/** Unix ms: the partition key. 0 up to year 9999 keeps to_timestamp() and the partitions sane. */
function timestamp(value: unknown): number {
  return int(value, 'timestamp', 253_402_300_799_999);
}

function text(value: unknown, field: string, allowEmpty = false): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) throw new Invalid(`${field} is not a non-empty string`);
  return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/** Optional fields echo what a client sent (a model name, a user agent), which may be empty. */
function nullableText(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : text(value, field, true);
}

function idOf(record: unknown): string | null {
  const id = (record as { id?: unknown } | null)?.id;
  return typeof id === 'string' && UUID.test(id) ? id : null;
}

export function emptyUsageRows(): UsageRows {
  return { ts: [], id: [], requestId: [], projectId: [], keyId: [], model: [], provider: [], inputTokens: [], outputTokens: [], totalTokens: [], latencyMs: [], finishReason: [], stream: [] };
}

export function emptyAuditRows(): AuditRows {
  return { ts: [], id: [], requestId: [], type: [], outcome: [], status: [], errorCode: [], projectId: [], keyId: [], actor: [], model: [], provider: [], clientIp: [], userAgent: [], latencyMs: [] };
}

/** Appends each valid usage record to `rows`; returns the ones left out. */
export function addUsageRows(rows: UsageRows, records: readonly unknown[]): RejectedRecord[] {
  const rejected: RejectedRecord[] = [];
  for (const raw of records) {
    try {
      if (typeof raw !== 'object' || raw === null) throw new Invalid('not an object');
      const r = raw as Partial<UsageRecord>;
      const tokens = r.tokens as Partial<UsageRecord['tokens']> | undefined;
      if (typeof tokens !== 'object' || tokens === null) throw new Invalid('tokens is not an object');
      const input = int(tokens.input, 'tokens.input', INT32_MAX);
      const output = int(tokens.output, 'tokens.output', INT32_MAX);
      const total = int(tokens.total, 'tokens.total', INT32_MAX);
      if (typeof r.finish_reason !== 'string' || !finishReasons.has(r.finish_reason)) throw new Invalid('finish_reason is not a known value');
      if (typeof r.stream !== 'boolean') throw new Invalid('stream is not a boolean');
      const row = {
        ts: timestamp(r.timestamp),
        id: uuid(r.id, 'id'),
        requestId: text(r.request_id, 'request_id'),
        projectId: uuid(r.project_id, 'project_id'),
        keyId: uuid(r.key_id, 'key_id'),
        model: text(r.model, 'model'),
        provider: text(r.provider, 'provider'),
        latencyMs: int(r.latency_ms, 'latency_ms', INT32_MAX),
      };
      rows.ts.push(row.ts);
      rows.id.push(row.id);
      rows.requestId.push(row.requestId);
      rows.projectId.push(row.projectId);
      rows.keyId.push(row.keyId);
      rows.model.push(row.model);
      rows.provider.push(row.provider);
      rows.inputTokens.push(input);
      rows.outputTokens.push(output);
      rows.totalTokens.push(total);
      rows.latencyMs.push(row.latencyMs);
      rows.finishReason.push(r.finish_reason);
      rows.stream.push(r.stream);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      rejected.push({ table: 'usage_records', id: idOf(raw), reason: err.message });
    }
  }
  return rejected;
}

/** Appends each valid audit event to `rows`; returns the ones left out. */
export function addAuditRows(rows: AuditRows, events: readonly unknown[]): RejectedRecord[] {
  const rejected: RejectedRecord[] = [];
  for (const raw of events) {
    try {
      if (typeof raw !== 'object' || raw === null) throw new Invalid('not an object');
      const e = raw as Partial<AuditEvent>;
      if (typeof e.outcome !== 'string' || !outcomes.has(e.outcome)) throw new Invalid('outcome is not a known value');
      const row = {
        ts: timestamp(e.timestamp),
        id: uuid(e.id, 'id'),
        requestId: text(e.request_id, 'request_id'),
        type: text(e.type, 'type'),
        status: int(e.status, 'status', SMALLINT_MAX),
        errorCode: nullableText(e.error_code, 'error_code'),
        projectId: nullableUuid(e.project_id, 'project_id'),
        keyId: nullableUuid(e.key_id, 'key_id'),
        actor: nullableUuid(e.actor, 'actor'),
        model: nullableText(e.model, 'model'),
        provider: nullableText(e.provider, 'provider'),
        clientIp: nullableText(e.client_ip, 'client_ip'),
        userAgent: nullableText(e.user_agent, 'user_agent'),
        latencyMs: int(e.latency_ms, 'latency_ms', INT32_MAX),
      };
      rows.ts.push(row.ts);
      rows.id.push(row.id);
      rows.requestId.push(row.requestId);
      rows.type.push(row.type);
      rows.outcome.push(e.outcome);
      rows.status.push(row.status);
      rows.errorCode.push(row.errorCode);
      rows.projectId.push(row.projectId);
      rows.keyId.push(row.keyId);
      rows.actor.push(row.actor);
      rows.model.push(row.model);
      rows.provider.push(row.provider);
      rows.clientIp.push(row.clientIp);
      rows.userAgent.push(row.userAgent);
      rows.latencyMs.push(row.latencyMs);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      rejected.push({ table: 'audit_events', id: idOf(raw), reason: err.message });
    }
  }
  return rejected;
}

/** Row `i` of `rows` as a one-row set, for writing records one by one. */
export function pickRow<T extends object>(rows: T, i: number): T {
  const one = {} as Record<string, unknown[]>;
  for (const [column, values] of Object.entries(rows)) one[column] = [(values as unknown[])[i]];
  return one as T;
}

export function rowCount(rows: { id: readonly string[] }): number {
  return rows.id.length;
}
