import { Packr } from 'msgpackr';
import type { AuditEvent } from './audit-event.js';
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
 * - 3: audit events add count (the requests a `gateway.throttled` event stands for; absent: 1)
 *   and skipped (providers not tried because of a cooldown; absent: none).
 *
 * Upgrade writers before proxies: a writer refuses a version it does not know, and the batch is
 * retried until a writer that knows it takes it (docs/pipeline.md).
 */
export type RecordBatchVersion = 1 | 2 | 3;

/** What proxies write. */
export const RECORD_BATCH_VERSION = 3;
/** What writers read. */
export const RECORD_BATCH_VERSIONS: readonly RecordBatchVersion[] = [1, 2, 3];

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

/** The proxy's entry point: a batch of the current version. */
export function encodeRecordBatch(usage: UsageRecord[], audit: AuditEvent[]): RecordBatchJobData {
  const batch: RecordBatch = { v: RECORD_BATCH_VERSION, usage, audit };
  return { b: packr.pack(batch).toString('base64') };
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
  if (!Array.isArray(obj.usage) || !Array.isArray(obj.audit)) throw new ContractError(NAME, 'usage and audit must be arrays');
  return { v, usage: obj.usage as UsageRecord[], audit: obj.audit as AuditEvent[] };
}
