import { Packr } from 'msgpackr';
import type { AuditEvent } from './audit-event.js';
import type { UsageRecord } from './usage-record.js';
import { ContractError, expectObject, expectVersion } from './version.js';

/**
 * The payload of one BullMQ job on RedisKeys.recordsQueue: many records, msgpack-encoded and carried
 * as base64 in the job data (BullMQ stores job data as JSON). Versioned so an old writer refuses,
 * rather than misreads, a batch from a newer proxy, and a newer writer keeps reading old batches.
 */
export interface RecordBatch {
  v: 1;
  usage: UsageRecord[];
  audit: AuditEvent[];
}

export interface RecordBatchJobData {
  /** msgpack(RecordBatch) as base64. */
  b: string;
}

const NAME = 'RecordBatch';
// Each batch must decode on its own in any writer, so no structure table is shared between
// processes (useRecords: false).
const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeRecordBatch(usage: UsageRecord[], audit: AuditEvent[]): RecordBatchJobData {
  const batch: RecordBatch = { v: 1, usage, audit };
  return { b: packr.pack(batch).toString('base64') };
}

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
  expectVersion(NAME, obj, [1]);
  if (!Array.isArray(obj.usage) || !Array.isArray(obj.audit)) throw new ContractError(NAME, 'usage and audit must be arrays');
  return { v: 1, usage: obj.usage as UsageRecord[], audit: obj.audit as AuditEvent[] };
}
