import { tagsProblem, type Tags } from './tags.js';
import { ContractError, expectNullableNumber, expectObject, expectString, parseVersioned } from './version.js';

/**
 * What the proxy knows about an API key, projected by the control plane into Redis at
 * RedisKeys.apiKey(sha256(key)). The secret itself is never stored anywhere.
 */
export interface KeyRecord {
  v: 1;
  id: string;
  project_id: string;
  /** Unix ms after which the key is dead without any message, or null. */
  expires_at: number | null;
  /** Default cost-attribution tags of the key's requests (request tags win); absent or null: none. */
  tags?: Tags | null;
}

const NAME = 'KeyRecord';

export function encodeKeyRecord(record: Omit<KeyRecord, 'v'>): string {
  const { tags } = record;
  // Added without a version bump, like the project policy's `mcp`: a proxy that predates tags
  // ignores the field and records the key's requests untagged, instead of refusing the key.
  const withTags = tags !== undefined && tags !== null && Object.keys(tags).length > 0;
  return JSON.stringify({ v: 1, id: record.id, project_id: record.project_id, expires_at: record.expires_at, ...(withTags ? { tags } : {}) });
}

export function decodeKeyRecord(raw: string): KeyRecord {
  const obj = parseVersioned(NAME, raw, [1]);
  const record: KeyRecord = {
    v: 1,
    id: expectString(NAME, obj, 'id'),
    project_id: expectString(NAME, obj, 'project_id'),
    expires_at: expectNullableNumber(NAME, obj, 'expires_at'),
  };
  if (obj.tags !== undefined && obj.tags !== null) {
    const tags = expectObject(NAME, obj.tags);
    const problem = tagsProblem(tags);
    if (problem !== null) throw new ContractError(NAME, `tags: ${problem}`);
    // Only a key with tags carries the field: an untagged key's record keeps its old shape.
    if (Object.keys(tags).length > 0) record.tags = tags as Tags;
  }
  return record;
}
