import { endUserOf } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import { extrasOf } from '../pipeline/request-extras.js';
import { mergeTags, parseTagsHeader } from './tags-header.js';

/**
 * The `tags` step: what the request's records are attributed to. Tags come from the
 * `x-gateway-tags` header over the key's default tags (request tags win per tag key); the end
 * user from the body: OpenAI `user` (chat, responses, embeddings) or Anthropic
 * `metadata.user_id` (which the Messages parse already put in the internal request's `user`).
 * A request with none of them reads three fields and allocates nothing: its records stay as they
 * were.
 */
export function attribute(ctx: RequestContext): void {
  const header = ctx.info.tags;
  const defaults = ctx.key?.tags ?? null;
  const user = ctx.parsed !== null ? ctx.parsed.chat.user : ctx.embeddings?.user;
  const hasUser = typeof user === 'string' && user.length > 0;
  if (header.length === 0 && defaults === null && !hasUser) return;
  // Parsed before anything is recorded: a bad header is refused (400 naming the tag, audited).
  const tags = mergeTags(defaults, parseTagsHeader(header));
  if (tags === null && !hasUser) return;
  const extras = extrasOf(ctx);
  extras.tags = tags;
  extras.endUser = hasUser ? endUserOf(user) : null;
}
