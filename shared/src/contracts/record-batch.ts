import { Packr } from 'msgpackr';
import type { AuditEvent } from './audit-event.js';
import { readCompactRows, type CompactRowsWriter } from './compact-rows.js';
import type { UsageRecord } from './usage-record.js';
import { ContractError, expectObject, expectVersion } from './version.js';

/**
 * The payload of one BullMQ job on RedisKeys.recordsQueue: many records, msgpack-encoded and carried
 * as base64 in the job data (BullMQ stores job data as JSON). Versioned so an old writer refuses,
 * rather than misreads, a batch from a newer proxy, and a newer writer keeps reading old batches.
 *
 * Versions:
 * - 1: the first record shapes.
 * - 2: usage records add tokens.cached, cost_usd, endpoint, provider_finish_reason and the
 *   finish reason `other`; audit events add endpoint, attempts, providers. A writer reading a
 *   v1 record stores the defaults documented on each field.
 * - 3: the same records as version 2, as compact rows (compact-rows.ts): one row per request with
 *   its audit event and usage record together, ids as bytes, repeated strings in a dictionary.
 *   The msgpack envelope is `{v: 3 (or 4), s: [[dictionary, rows], …]}` (segments: batches merged while
 *   Redis was away keep their own dictionaries); a writer that knows only 1 and 2 reads `v` and
 *   refuses the batch, which stays queued for a newer writer.
 *   Audit events gain count (the requests a `gateway.throttled` event stands for; absent: 1),
 *   skipped (providers not tried because of a cooldown; absent: none) and mcp (an MCP request's
 *   server, tool and method; absent: not an MCP request).
 * - 4: version 3 rows that may carry what version 4 added: usage records' tokens.cache_write,
 *   tags, end_user, cache_hit and saved_usd; audit events' tags, end_user, cache and guardrails
 *   (compact-rows.ts). A writer that knows only 3 refuses the batch rather than misreading it.
 * - 5: version 4 rows that may carry a usage record's requested_model (the model id a project's
 *   alias replaced). A writer that knows only 4 refuses the batch rather than misreading it.
 * - 6: version 5 rows that may carry a usage record's and an audit event's batch_id (the batch the
 *   request was a line of). A writer that knows only 5 refuses the batch rather than misreading it.
 *
 * Upgrade writers before proxies: a writer refuses a version it does not know, and the batch is
 * retried until a writer that knows it takes it (docs/pipeline.md).
 */
export type RecordBatchVersion = 1 | 2 | 3 | 4 | 5 | 6;

/** What proxies write. */
export const RECORD_BATCH_VERSION = 6;
/** What writers read. */
export const RECORD_BATCH_VERSIONS: readonly RecordBatchVersion[] = [1, 2, 3, 4, 5, 6];

export interface RecordBatch {
  v: RecordBatchVersion;
  usage: UsageRecord[];
  audit: AuditEvent[];
}

export interface RecordBatchJobData {
  /** msgpack(RecordBatch) as base64. */
  b: string;
}

const NAME = 'RecordBatch';

/** BullMQ job name of a RecordBatch. */
export const RECORD_JOB_NAME = 'batch';

/**
 * The backoff type the writer registers and every records job names. BullMQ's built-in
 * exponential backoff has no ceiling, so a job failing through a long Postgres outage would
 * otherwise wait days between attempts; this one is capped by the writer.
 */
export const RECORD_BACKOFF_TYPE = 'records-capped';

/** Job options producer and writer agree on (the producer adds a deterministic jobId). */
export const RECORD_JOB_OPTIONS = {
  // A batch is never discarded for failing: at the writer's backoff ceiling this is centuries.
  attempts: 2 ** 31 - 1,
  backoff: { type: RECORD_BACKOFF_TYPE, delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: false,
} as const;
// Records: each record shape is defined once inside the batch and every record after it is a row
// of values (40% smaller and faster than repeating field names). The definitions travel inline, so
// a batch still decodes on its own in any writer: no structure table is shared between processes.
const packr = new Packr({ useRecords: true, moreTypes: false });

/**
 * A version 2 batch of record objects, as proxies wrote them before version 3 (tests and tools
 * that hand-craft batches use it; a writer reads both).
 */
export function encodeRecordBatch(usage: UsageRecord[], audit: AuditEvent[]): RecordBatchJobData {
  const batch: RecordBatch = { v: 2, usage, audit };
  return { b: packr.pack(batch).toString('base64') };
}

/** The proxy's entry point: a version 3 batch of compact rows, one segment per writer given. */
export function encodeCompactRecordBatch(segments: readonly CompactRowsWriter[]): RecordBatchJobData {
  return { b: packr.pack({ v: RECORD_BATCH_VERSION, s: segments.map((s) => [s.dictionary, s.rows()]) }).toString('base64') };
}

/**
 * The batch as sent, records unchanged: the writer checks every record and applies the defaults
 * of the batch's version itself (control-plane/src/writer/record-rows.ts), in one pass.
 */
export function decodeRecordBatch(data: unknown): RecordBatch {
  const job = expectObject(NAME, data);
  if (typeof job.b !== 'string') throw new ContractError(NAME, 'job data has no payload');
  let decoded: unknown;
  try {
    decoded = packr.unpack(Buffer.from(job.b, 'base64'));
  } catch {
    throw new ContractError(NAME, 'payload is not msgpack');
  }
  const obj = expectObject(NAME, decoded);
  const v = expectVersion(NAME, obj, RECORD_BATCH_VERSIONS) as RecordBatchVersion;
  if (v >= 3) return { v, ...splitSegments(obj.s) };
  if (!Array.isArray(obj.usage) || !Array.isArray(obj.audit)) throw new ContractError(NAME, 'usage and audit must be arrays');
  return { v, usage: obj.usage as UsageRecord[], audit: obj.audit as AuditEvent[] };
}

/** A version 3 batch's rows, split back into usage records and audit events. */
function splitSegments(segments: unknown): { usage: UsageRecord[]; audit: AuditEvent[] } {
  if (!Array.isArray(segments)) throw new ContractError(NAME, 'segments must be an array');
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  for (const segment of segments) {
    if (!Array.isArray(segment) || !Array.isArray(segment[0]) || !(segment[1] instanceof Uint8Array)) throw new ContractError(NAME, 'a segment must be [dictionary, rows]');
    try {
      readCompactRows(segment[0] as unknown[], segment[1], usage, audit);
    } catch (err) {
      throw new ContractError(NAME, `rows do not parse (${(err as Error).message})`);
    }
  }
  return { usage, audit };
}
