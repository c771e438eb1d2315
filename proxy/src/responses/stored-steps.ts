import { Errors, GatewayError } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import { isResponseId } from '../conversion/responses-chat/response-object.js';
import type { ProviderAnswer, StoredResponseRequest } from '../providers/adapter.js';
import { Cancel } from '../providers/cancel.js';
import { providerStatusError, readLimited, transportFailure } from '../providers/upstream-error.js';
import type { ResponseStore, StoredResponse } from './response-store.js';

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, as
 * OpenAI documents them. A response the gateway kept (a translated one, responses/state-step.ts) is
 * answered from its store; one a native provider keeps, which the gateway remembers only with its
 * provider entry, is asked of that provider, and its answer passed on (a streamed retrieve of a
 * background response streams). The key's project is part of every lookup: another project's id
 * is answered 404 as an unknown one is.
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

/** The project's record of this id: the response itself, or where a provider keeps it (`response` null, `provider` set). */
async function found(ctx: RequestContext, store: ResponseStore, id: string): Promise<StoredResponse | null> {
  const record = await store.get(id, ctx.projectId);
  if (record === null || (record.response === null && record.provider === null)) {
    ctx.fail(notFound(id), 'error');
    return null;
  }
  return record;
}

/**
 * Asks the provider entry that made a native response, and passes its answer on: a 2xx as it came
 * (a stream chunk by chunk), a refusal as the gateway's error of the same class (the provider's
 * words scrubbed, as on every path). A DELETE the provider answered, or an id it no longer knows,
 * is forgotten here too.
 */
async function atProvider(ctx: RequestContext, store: ResponseStore, record: StoredResponse, method: StoredResponseRequest['method'], items: boolean): Promise<void> {
  const id = ctx.info.pathId;
  const provider = record.provider as string;
  const adapter = ctx.deps.router.adapterNamed(provider);
  const cancel = (ctx.cancel = new Cancel());
  ctx.provider = provider;
  const asked = adapter?.storedResponse?.({ method, id, items, query: ctx.info.query, headers: ctx.info.providerHeaders }, cancel) ?? null;
  if (asked === null) {
    // The entry was renamed or removed from the providers file, or no longer speaks the Responses API.
    ctx.deps.log.warn({ requestId: ctx.info.requestId, responseId: id, provider }, 'a native response is kept by a provider entry this gateway no longer sends Responses requests to');
    return ctx.fail(notFound(id), 'error');
  }
  let answer: ProviderAnswer;
  try {
    answer = await asked;
  } catch (err) {
    return ctx.fail(transportFailure(provider, err, cancel.aborted), 'error');
  }
  if (ctx.finished) return answer.destroy();
  if (answer.status === 404 || (method === 'DELETE' && answer.status < 300)) await forget(ctx, store, id);
  if (answer.status === 404) {
    answer.destroy();
    return ctx.fail(notFound(id), 'error');
  }
  if (answer.status >= 300) {
    const text = await readLimited(answer);
    return ctx.fail(providerStatusError(provider, answer.status, text, answer.header('retry-after')), 'error');
  }
  const type = answer.header('content-type') ?? 'application/json';
  if (type.startsWith('text/event-stream')) return relay(ctx, answer, type, provider, cancel);
  let body: Buffer;
  try {
    body = await answer.body();
  } catch (err) {
    return ctx.fail(transportFailure(provider, err, cancel.aborted), 'error');
  }
  if (ctx.finished) return;
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ctx.ex.sendWith(answer.status, [['content-type', type]], body);
  ctx.finish('success', answer.status, null);
}

/** A streamed retrieve (`stream=true`, a background response): the provider's events as they come, with its backpressure. */
async function relay(ctx: RequestContext, answer: ProviderAnswer, type: string, provider: string, cancel: Cancel): Promise<void> {
  const { ex } = ctx;
  // A client that leaves stops the provider's stream at once, not at its next event.
  ex.onAbort = () => {
    cancel.abort();
    ctx.clientGone();
  };
  ex.startStreamWith(answer.status, [['content-type', type], ['cache-control', 'no-cache']]);
  try {
    for await (const chunk of answer.stream()) {
      if (ctx.finished || ex.aborted) return answer.destroy();
      if (!ex.write(chunk)) await ex.drain();
    }
  } catch (err) {
    return ctx.fail(transportFailure(provider, err, cancel.aborted), 'error');
  }
  if (ctx.finished) return;
  if (ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ex.endStream();
  ctx.finish('success', answer.status, null);
}

/** The gateway's memory of a response its provider no longer has; a failure only leaves a row that expires. */
async function forget(ctx: RequestContext, store: ResponseStore, id: string): Promise<void> {
  try {
    await store.delete(id, ctx.projectId);
  } catch (err) {
    ctx.deps.log.warn({ requestId: ctx.info.requestId, responseId: id, reason: err instanceof Error ? err.message : String(err) }, "a deleted native response's provider could not be forgotten; the row expires with the project's ttl");
  }
}

export const retrieveResponse = withStore(async (ctx, store, id) => {
  const record = await found(ctx, store, id);
  if (record === null) return;
  if (record.response === null) return atProvider(ctx, store, record, 'GET', false);
  send(ctx, record.response);
});

export const deleteResponse = withStore(async (ctx, store, id) => {
  const record = await found(ctx, store, id);
  if (record === null) return;
  if (record.response === null) return atProvider(ctx, store, record, 'DELETE', false);
  if (!(await store.delete(id, ctx.projectId))) return ctx.fail(notFound(id), 'error');
  send(ctx, { id, object: 'response.deleted', deleted: true });
});

/** The response's own input items, newest first unless `order=asc`, paged by `after` and `limit` (1–100, default 20). */
export const listInputItems = withStore(async (ctx, store, id) => {
  const record = await found(ctx, store, id);
  if (record === null) return;
  if (record.response === null) return atProvider(ctx, store, record, 'GET', true);
  const query = new URLSearchParams(ctx.info.query);
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return ctx.fail(Errors.invalidField('limit', '`limit` must be an integer from 1 to 100.'), 'error');
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return ctx.fail(Errors.invalidField('order', '`order` must be asc or desc.'), 'error');
  let items = order === 'asc' ? [...record.input_items] : [...record.input_items].reverse();
  const after = query.get('after');
  if (after !== null) {
    const at = items.findIndex((item) => (item as { id?: unknown }).id === after);
    items = at === -1 ? [] : items.slice(at + 1);
  }
  const page = items.slice(0, limit);
  const idOf = (item: unknown) => ((item as { id?: unknown } | undefined)?.id as string | undefined) ?? null;
  send(ctx, { object: 'list', data: page, first_id: idOf(page[0]), last_id: idOf(page.at(-1)), has_more: items.length > limit });
});
