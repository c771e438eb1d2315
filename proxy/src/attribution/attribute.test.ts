import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../pipeline/context.js';
import { attribute } from './attribute.js';

/** The step on the context fields it reads; the rest of a request is proxy/test/attribution.test.ts. */
function context(tags: string, keyTags: Record<string, string> | null, user: unknown): RequestContext {
  return { info: { tags }, key: keyTags === null ? { id: 'k', project_id: 'p', expires_at: null } : { id: 'k', project_id: 'p', expires_at: null, tags: keyTags }, parsed: { chat: { user } }, embeddings: null, extras: null } as unknown as RequestContext;
}

describe('the tags step', () => {
  it('creates no extras for a request with no tags, no key tags and no user', () => {
    for (const user of [undefined, null, '']) {
      const ctx = context('', null, user);
      attribute(ctx);
      expect(ctx.extras).toBeNull();
    }
    const onlyCommas = context(' , ', null, undefined);
    attribute(onlyCommas);
    expect(onlyCommas.extras).toBeNull();
  });

  it('records tags over the key defaults, and the end user', () => {
    const ctx = context('team=ads', { team: 'search', env: 'prod' }, 'alice');
    attribute(ctx);
    expect(ctx.extras).toMatchObject({ tags: { team: 'ads', env: 'prod' }, endUser: 'alice' });
  });

  it('records the end user alone, without tags', () => {
    const ctx = context('', null, 'bob');
    attribute(ctx);
    expect(ctx.extras).toMatchObject({ tags: null, endUser: 'bob' });
  });
});
