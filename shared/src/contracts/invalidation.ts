import { ContractError, expectNullableString, expectString, parseVersioned } from './version.js';

/**
 * Published on RedisKeys.invalidationChannel after the projection changed. Proxies drop what the
 * message names from their in-process maps (and, for deletions, cut requests in flight).
 * - key.deleted: key_hash and key_id name the key.
 * - key.created: key_hash names it, so a proxy forgets a cached "unknown key" answer.
 * - project.deleted / project.updated: project_id names it.
 * - projection.rebuilt: everything cached may be stale; drop it all.
 */
export type InvalidationKind = 'key.deleted' | 'key.created' | 'project.deleted' | 'project.updated' | 'projection.rebuilt';

export interface Invalidation {
  v: 1;
  kind: InvalidationKind;
  key_hash: string | null;
  key_id: string | null;
  project_id: string | null;
  /** Unix ms when the control plane published it; used to measure propagation. */
  at: number;
}

const NAME = 'Invalidation';
const KINDS: readonly InvalidationKind[] = ['key.deleted', 'key.created', 'project.deleted', 'project.updated', 'projection.rebuilt'];

export function encodeInvalidation(msg: Omit<Invalidation, 'v' | 'at'> & { at?: number }): string {
  return JSON.stringify({
    v: 1,
    kind: msg.kind,
    key_hash: msg.key_hash,
    key_id: msg.key_id,
    project_id: msg.project_id,
    at: msg.at ?? Date.now(),
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
  };
}
