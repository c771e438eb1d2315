import { expectNullableNumber, expectString, parseVersioned } from './version.js';

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
}

const NAME = 'KeyRecord';

export function encodeKeyRecord(record: Omit<KeyRecord, 'v'>): string {
  return JSON.stringify({ v: 1, id: record.id, project_id: record.project_id, expires_at: record.expires_at });
}

export function decodeKeyRecord(raw: string): KeyRecord {
  const obj = parseVersioned(NAME, raw, [1]);
  return {
    v: 1,
    id: expectString(NAME, obj, 'id'),
    project_id: expectString(NAME, obj, 'project_id'),
    expires_at: expectNullableNumber(NAME, obj, 'expires_at'),
  };
}
