import { Errors, MAX_TAGS, splitTag, tagProblem, type Tags } from '@gateway/shared';

/** The header a request names its cost-attribution tags in: `team=search,feature=rag`. */
export const TAGS_HEADER = 'x-gateway-tags';

/**
 * The tags of an `x-gateway-tags` header, or null when it is empty. Pairs are comma-separated,
 * spaces around them ignored; a key named twice keeps its last value. Anything outside the rules
 * (shared/src/contracts/tags.ts) is the client's fault: 400 naming the tag.
 */
export function parseTagsHeader(header: string): Tags | null {
  if (header.length === 0) return null;
  // No prototype: `__proto__` and `constructor` are valid tag keys like any other.
  const tags: Tags = Object.create(null) as Tags;
  let count = 0;
  for (const part of header.split(',')) {
    const pair = part.trim();
    if (pair.length === 0) continue;
    const split = splitTag(pair);
    if (split === null) throw Errors.invalidField(TAGS_HEADER, `${TAGS_HEADER}: \`${pair}\` is not a key=value tag.`);
    const [key, value] = split;
    const problem = tagProblem(key, value);
    if (problem !== null) throw Errors.invalidField(TAGS_HEADER, `${TAGS_HEADER}: ${problem}.`);
    if (!Object.hasOwn(tags, key) && ++count > MAX_TAGS) throw Errors.invalidField(TAGS_HEADER, `${TAGS_HEADER}: at most ${MAX_TAGS} tags are allowed.`);
    tags[key] = value;
  }
  return count === 0 ? null : tags;
}

/** The request's tags over the key's defaults: a tag key the request names takes its value. */
export function mergeTags(defaults: Tags | null, request: Tags | null): Tags | null {
  if (defaults === null) return request;
  if (request === null) return defaults;
  return Object.assign({}, defaults, request);
}
