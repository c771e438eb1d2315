import { Errors, MAX_END_USER, MAX_TAGS, splitTag, tagProblem, type RecordTags } from '@gateway/shared';
import type { AttributionFilter } from '../db/attribution-filter.js';

/** The query parameters `tag=<key>=<value>` (repeatable: all must match) and `end_user`. */
export interface AttributionQuery {
  tag?: string[];
  end_user?: string;
}

export const attributionQuerySchema = {
  tag: {
    type: 'array',
    maxItems: MAX_TAGS,
    items: { type: 'string', minLength: 3, maxLength: 100 },
    description: 'Only records carrying this tag, as `key=value` (e.g. `tag=team=search`); repeat it to require several.',
  },
  end_user: { type: 'string', minLength: 1, maxLength: MAX_END_USER, description: 'Only records of this end user (OpenAI `user`, Anthropic `metadata.user_id`).' },
} as const;

/** The filter the parameters ask for; a malformed tag is a 400 naming it. */
export function attributionFilter(query: AttributionQuery): AttributionFilter {
  const filter: AttributionFilter = {};
  if (query.tag !== undefined && query.tag.length > 0) {
    const tags: RecordTags = Object.create(null) as RecordTags;
    for (const pair of query.tag) {
      const split = splitTag(pair);
      if (split === null) throw Errors.tagNotKeyValue(pair);
      const [key, value] = split;
      const problem = tagProblem(key, value);
      if (problem !== null) throw Errors.badTagFilter(problem);
      if (Object.hasOwn(tags, key) && tags[key] !== value) throw Errors.tagGivenTwice(key);
      tags[key] = value;
    }
    filter.tags = { ...tags };
  }
  if (query.end_user !== undefined) filter.endUser = query.end_user;
  return filter;
}
