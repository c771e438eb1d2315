import { ContractError, expectNullableNumber, expectNullableString, expectString, parseVersioned } from './version.js';

/**
 * What tells proxies to drop something from their in-process maps (and, for deletions, cut
 * requests in flight). It travels on two independent channels (docs/architecture.md, "Two
 * invalidation channels"): published on RedisKeys.invalidationChannel after the projection
 * changed, and, for deletions, appended to the invalidation log in PostgreSQL in the deleting
 * transaction and streamed to proxies by the control plane (GET /internal/v1/invalidations).
 * - key.deleted: key_hash and key_id name the key.
 * - key.created: key_hash names it, so a proxy forgets a cached "unknown key" answer.
 * - project.deleted / project.updated: project_id names it.
 * - projection.rebuilt: everything cached may be stale; drop it all. Control planes of this
 *   version no longer send it (a rebuild publishes what it changed, key by key); proxies still obey
 *   it from older ones during a rolling deploy.
 * - stream.alive (log stream only, never on Redis): the stream is live; `id` is the newest log
 *   entry the control plane knows. Sent when the stream opens and then every second.
 * - stream.reset (log stream only): the entries after the proxy's `after` were pruned; it must
 *   forget every key it caches, then go on from `id`.
 */
export type InvalidationKind =
  | 'key.deleted'
  | 'key.created'
  | 'project.deleted'
  | 'project.updated'
  | 'projection.rebuilt'
  | 'stream.alive'
  | 'stream.reset';

export interface Invalidation {
  v: 1;
  kind: InvalidationKind;
  key_hash: string | null;
  key_id: string | null;
  project_id: string | null;
  /** Unix ms when the control plane published it; used to measure propagation. */
  at: number;
  /** Id of the invalidation log entry (increasing), when the change was logged; else null. */
  id: number | null;
}

const NAME = 'Invalidation';
const KINDS: readonly InvalidationKind[] = [
  'key.deleted',
  'key.created',
  'project.deleted',
  'project.updated',
  'projection.rebuilt',
  'stream.alive',
  'stream.reset',
];

export function encodeInvalidation(msg: Omit<Invalidation, 'v' | 'at' | 'id'> & { at?: number; id?: number | null }): string {
  return JSON.stringify({
    v: 1,
    kind: msg.kind,
    key_hash: msg.key_hash,
    key_id: msg.key_id,
    project_id: msg.project_id,
    at: msg.at ?? Date.now(),
    id: msg.id ?? null,
  });
}

export function decodeInvalidation(raw: string): Invalidation {
  const obj = parseVersioned(NAME, raw, [1]);
  const kind = expectString(NAME, obj, 'kind');
  if (!KINDS.includes(kind as InvalidationKind)) throw new ContractError(NAME, `unknown kind ${kind}`);
  const at = obj.at;
  return {
    v: 1,
    kind: kind as InvalidationKind,
    key_hash: expectNullableString(NAME, obj, 'key_hash'),
    key_id: expectNullableString(NAME, obj, 'key_id'),
    project_id: expectNullableString(NAME, obj, 'project_id'),
    at: typeof at === 'number' ? at : 0,
    id: expectNullableNumber(NAME, obj, 'id'),
  };
}
