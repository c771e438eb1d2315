import { Errors, GatewayError } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import { isResponseId } from '../conversion/responses-chat/response-object.js';
import type { ResponseStore, StoredResponse } from './response-store.js';

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, as
 * OpenAI documents them, for the responses the gateway kept (responses/state-step.ts). The key's
 * project is part of every lookup: another project's id is answered 404 as an unknown one is.
 */
type Answer = (ctx: RequestContext, store: ResponseStore, id: string) => Promise<void>;

function withStore(answer: Answer): (ctx: RequestContext) => void | Promise<void> {
  return (ctx) => {
    const store = ctx.deps.responses ?? null;
    const id = ctx.info.pathId;
    // An id the gateway never makes is not asked for.
    if (store === null || !isResponseId(id)) return ctx.fail(notFound(id), 'error');
    return answer(ctx, store, id).catch((err: unknown) => ctx.fail(err instanceof GatewayError ? err : Errors.responseStoreUnavailable('no answer'), 'error'));
  };
}

function notFound(id: string): GatewayError {
  return Errors.notFoundNamed('response', id);
}

function send(ctx: RequestContext, body: unknown): void {
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ctx.ex.send(200, 'application/json', JSON.stringify(body));
  ctx.finish('success', 200, null);
}

async function kept(ctx: RequestContext, store: ResponseStore, id: string): Promise<StoredResponse | null> {
  const found = await store.get(id, ctx.projectId);
  if (found === null || found.response === null) {
    ctx.fail(notFound(id), 'error');
    return null;
  }
  return found;
}

export const retrieveResponse = withStore(async (ctx, store, id) => {
  const found = await kept(ctx, store, id);
  if (found !== null) send(ctx, found.response);
});

export const deleteResponse = withStore(async (ctx, store, id) => {
  if (!(await store.delete(id, ctx.projectId))) return ctx.fail(notFound(id), 'error');
  send(ctx, { id, object: 'response.deleted', deleted: true });
});

/** The response's own input items, newest first unless `order=asc`, paged by `after` and `limit` (1–100, default 20). */
export const listInputItems = withStore(async (ctx, store, id) => {
  const found = await kept(ctx, store, id);
  if (found === null) return;
  const query = new URLSearchParams(ctx.info.query);
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return ctx.fail(Errors.invalidField('limit', '`limit` must be an integer from 1 to 100.'), 'error');
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return ctx.fail(Errors.invalidField('order', '`order` must be asc or desc.'), 'error');
  let items = order === 'asc' ? [...found.input_items] : [...found.input_items].reverse();
  const after = query.get('after');
  if (after !== null) {
    const at = items.findIndex((item) => (item as { id?: unknown }).id === after);
    items = at === -1 ? [] : items.slice(at + 1);
  }
  const page = items.slice(0, limit);
  const idOf = (item: unknown) => ((item as { id?: unknown } | undefined)?.id as string | undefined) ?? null;
  send(ctx, { object: 'list', data: page, first_id: idOf(page[0]), last_id: idOf(page.at(-1)), has_more: items.length > limit });
});
