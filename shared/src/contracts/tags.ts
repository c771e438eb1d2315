import { MAX_END_USER_LENGTH, type RecordTags } from './usage-record.js';

/**
 * Cost-attribution tags (DESIGN §7 "Tags and end users"): the rules shared by the proxy (the
 * `x-gateway-tags` header, a key's default tags from its record) and the control plane (a key's
 * `tags` body field, the `tag=<k>=<v>` filters), so a tag the one accepts the other accepts too.
 */
export type Tags = RecordTags;

/** Pairs a request (or a key) may carry. */
export const MAX_TAGS = 10;
export const TAG_KEY = /^[a-z0-9_.-]{1,32}$/;
export const TAG_VALUE = /^[A-Za-z0-9_.:-]{1,64}$/;
/** The longest `end_user` recorded; a longer `user` / `metadata.user_id` is cut to it (not refused). */
export const MAX_END_USER = MAX_END_USER_LENGTH;

/** Why `key=value` is not a valid tag, or null when it is. */
export function tagProblem(key: string, value: string): string | null {
  if (!TAG_KEY.test(key)) return `tag key \`${key}\` must be 1-32 characters of a-z, 0-9, _ . -`;
  if (!TAG_VALUE.test(value)) return `tag \`${key}\` has value \`${value}\`, which must be 1-64 characters of A-Z, a-z, 0-9, _ . : -`;
  return null;
}

/** A `key=value` pair split at its first `=`; null when there is none. */
export function splitTag(pair: string): [key: string, value: string] | null {
  const at = pair.indexOf('=');
  return at <= 0 ? null : [pair.slice(0, at), pair.slice(at + 1)];
}

/** An object of valid tags, or the problem with it (for a key's `tags` body field and its record). */
export function tagsProblem(tags: Readonly<Record<string, unknown>>): string | null {
  const keys = Object.keys(tags);
  if (keys.length > MAX_TAGS) return `at most ${MAX_TAGS} tags are allowed (got ${keys.length})`;
  for (const key of keys) {
    const value = tags[key];
    if (typeof value !== 'string') return `tag \`${key}\` must have a string value`;
    const problem = tagProblem(key, value);
    if (problem !== null) return problem;
  }
  return null;
}

/** An `end_user` as recorded: at most MAX_END_USER characters, never a split surrogate pair; null when empty. */
export function endUserOf(value: string): string | null {
  if (value.length === 0) return null;
  if (value.length <= MAX_END_USER) return value;
  const last = value.charCodeAt(MAX_END_USER - 1);
  // A high surrogate at the cut would leave half a character: cut before it.
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_END_USER - 1 : MAX_END_USER);
}
