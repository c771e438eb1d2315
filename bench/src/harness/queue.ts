import type { Redis } from 'ioredis';
import { decodeRecordBatch, type AuditEvent, type RedisKeys } from '@gateway/shared';

/**
 * Reads the records queue straight from Redis while no writer runs: BullMQ keeps waiting job ids
 * in `<prefix>:<queue>:wait` and each job's data (a RecordBatch as JSON) in the job's hash.
 */
function queueKey(keys: RedisKeys, suffix: string): string {
  return `${keys.bullPrefix}:${keys.recordsQueue}:${suffix}`;
}

export async function waitingJobIds(redis: Redis, keys: RedisKeys): Promise<string[]> {
  return redis.lrange(queueKey(keys, 'wait'), 0, -1);
}

/** Jobs waiting, being written, and given up on (failed jobs are kept, never removed). */
export async function queueDepth(redis: Redis, keys: RedisKeys): Promise<{ waiting: number; active: number; failed: number }> {
  const [waiting, active, failed] = await Promise.all([redis.llen(queueKey(keys, 'wait')), redis.llen(queueKey(keys, 'active')), redis.zcard(queueKey(keys, 'failed'))]);
  return { waiting, active, failed };
}

/** Audit events in the given jobs, counted by user agent and outcome. */
export async function countAudit(redis: Redis, keys: RedisKeys, jobIds: string[]): Promise<Map<string, Map<string, number>>> {
  const counts = new Map<string, Map<string, number>>();
  const add = (e: AuditEvent) => {
    const ua = e.user_agent ?? '';
    const byOutcome = counts.get(ua) ?? new Map<string, number>();
    // A gateway.throttled event stands for `count` requests.
    byOutcome.set(e.outcome, (byOutcome.get(e.outcome) ?? 0) + (e.count ?? 1));
    counts.set(ua, byOutcome);
  };
  for (let i = 0; i < jobIds.length; i += 200) {
    const pipeline = redis.pipeline();
    for (const id of jobIds.slice(i, i + 200)) pipeline.hget(queueKey(keys, id), 'data');
    const replies = (await pipeline.exec()) ?? [];
    for (const [err, raw] of replies) {
      if (err || typeof raw !== 'string') continue;
      for (const event of decodeRecordBatch(JSON.parse(raw)).audit) add(event);
    }
  }
  return counts;
}
