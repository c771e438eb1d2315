import { Errors, GatewayError } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import type { ResponsesRequest } from '../protocols/openai-responses/parse-request.js';
import { inputMessages } from '../conversion/responses-chat/input-items.js';
import { isResponseId, newId } from '../conversion/responses-chat/response-object.js';
import { ToolSet } from '../conversion/responses-chat/tools.js';
import type { ChatMessage } from '../request/openai-chat.js';
import type { ResponseStore, StoredResponse } from './response-store.js';
import { nativeConversation } from './native-conversation.js';
import { Cancel } from '../providers/cancel.js';

/**
 * responses state (POST /v1/responses, translated): `previous_response_id` continues a response
 * the gateway kept — its conversation is put before this request's input, after this request's
 * instructions (instructions are not carried over, as OpenAI documents) — and `store` (true unless
 * the client says false) keeps this one once answered (ctx.keepAnswer, called by the respond step
 * before the answer's last bytes, so a follow-up never finds it missing). A route whose providers
 * serve the Responses API keeps its own state: the body goes to them as it came.
 */
export function responsesState(ctx: RequestContext): void | Promise<void> {
  const parsed = ctx.parsed as ResponsesRequest;
  const store = ctx.deps.responses ?? null;
  if (parsed.native !== undefined && ctx.route?.nativeFor('openai-responses') === true) return store === null ? undefined : nativeState(ctx, store, parsed.native.body);
  const previous = parsed.previousResponseId ?? null;
  if (store === null) {
    if (previous !== null) return ctx.fail(Errors.invalidField('previous_response_id', '`previous_response_id` needs stored responses, and this gateway keeps none (it runs without its control plane).'), 'error');
    if (parsed.store === true) return ctx.fail(Errors.invalidField('store', '`store: true` needs stored responses, and this gateway keeps none (it runs without its control plane). Send `store: false` or leave it out.'), 'error');
    return;
  }
  const keep = parsed.store !== false;
  parsed.echo.store = keep;
  const instructions = parsed.chat.messages[0]?.role === 'system' && parsed.echo.instructions !== null ? 1 : 0;
  const own = parsed.chat.messages.slice(instructions);
  if (previous === null) {
    if (keep) ctx.keepAnswer = keeper(ctx, store, parsed, [], own);
    return;
  }
  parsed.echo.previous_response_id = previous;
  return store.get(previous, ctx.projectId).then(
    (found) => continued(ctx, store, parsed, found, previous, instructions, own, keep),
    (err: unknown) => ctx.fail(err instanceof GatewayError ? err : Errors.responseStoreUnavailable('no answer'), 'error'),
  );
}

/**
 * A native route keeps its own state at the provider; the gateway remembers only which provider
 * entry made each response (`store` not false): so that GET, DELETE and input_items of that id are
 * asked of it (stored-steps.ts), and so that a `previous_response_id` is sent to that entry
 * whichever target a route of several would draw — another account's provider would not know the
 * id. A response the gateway kept for a translated route cannot be continued here (the provider
 * never saw it): refused, naming the field. The memory is an aid, never a dependency: with the
 * control plane unreachable the request goes on unpinned.
 */
function nativeState(ctx: RequestContext, store: ResponseStore, body: Record<string, unknown>): void | Promise<void> {
  const several = (ctx.route?.targets.length ?? 0) >= 2;
  // The answer waits for the memory only where a follow-up could otherwise go astray, or where the
  // client will ask for the response at once (a background one, polled); elsewhere it is written
  // beside the answer, and a retrieve in the same millisecond may not find it yet.
  if (body.store !== false) ctx.keepNative = rememberer(ctx, store, several || body.background === true);
  // A route of one provider entry cannot send a follow-up astray: no round trip before the call.
  if (!several) return;
  const previous = body.previous_response_id;
  if (typeof previous !== 'string' || !isResponseId(previous)) return;
  return store.get(previous, ctx.projectId).then(
    (found) => {
      if (found === null) return;
      const provider = found.provider;
      if (provider === null) {
        return ctx.fail(Errors.invalidField('previous_response_id', `The response '${previous}' was kept by the gateway for a model it translates: continue it with such a model, not ${ctx.model ?? 'this one'}.`), 'error');
      }
      if (!(ctx.route?.targets ?? []).some((target) => target.adapter.name === provider)) {
        return ctx.fail(Errors.invalidField('previous_response_id', `The response '${previous}' is kept by the provider ${provider}, which does not serve ${ctx.model ?? 'this model'}.`), 'error');
      }
      ctx.pinnedProvider = provider;
    },
    (err: unknown) => {
      ctx.deps.log.warn({ requestId: ctx.info.requestId, reason: err instanceof Error ? err.message : String(err) }, 'the provider of a previous response could not be looked up; the request goes unpinned');
    },
  );
}

/**
 * Remembers a native response's id with the provider entry that answered; a failure is logged, the
 * answer still goes. `awaited`: the answer waits until it is remembered; otherwise it is not held.
 */
function rememberer(ctx: RequestContext, store: ResponseStore, awaited: boolean): (id: string) => Promise<void> {
  return (id) => {
    const provider = ctx.provider;
    if (!isResponseId(id) || provider === null) return Promise.resolve();
    const remembered = store.put({ id, project_id: ctx.projectId, provider, model: ctx.model ?? '', input_items: [], response: null, messages: null }).catch((err: unknown) => {
      ctx.deps.log.warn({ requestId: ctx.info.requestId, responseId: id, reason: err instanceof Error ? err.message : String(err) }, "a native response's provider could not be remembered; a follow-up or retrieve naming it goes unpinned or is not found");
    });
    return awaited ? remembered : Promise.resolve();
  };
}

function continued(ctx: RequestContext, store: ResponseStore, parsed: ResponsesRequest, found: StoredResponse | null, id: string, instructions: number, own: ChatMessage[], keep: boolean): void | Promise<void> {
  if (found === null) return ctx.fail(Errors.invalidField('previous_response_id', `Previous response with id '${id}' not found.`), 'error');
  if (found.messages === null) return found.provider === null ? ctx.fail(Errors.invalidField('previous_response_id', `Previous response with id '${id}' not found.`), 'error') : fromProvider(ctx, store, parsed, found.provider, id, instructions, own, keep);
  go(ctx, store, parsed, found.messages, instructions, own, keep);
}

/** The kept conversation before this request's input, after its instructions; the answer kept with it when `store` is on. */
function go(ctx: RequestContext, store: ResponseStore, parsed: ResponsesRequest, prior: ChatMessage[], instructions: number, own: ChatMessage[], keep: boolean): void {
  parsed.chat.messages = [...parsed.chat.messages.slice(0, instructions), ...prior, ...own];
  if (keep) ctx.keepAnswer = keeper(ctx, store, parsed, prior, own);
}

/**
 * A native response continued on a translated model: its conversation read back from the provider
 * entry that made it (native-conversation.ts) and translated as any input is. What the
 * translation cannot carry (a built-in tool's call) is refused naming `previous_response_id`,
 * before anything is counted. Once answered, the conversation is the gateway's to keep.
 */
async function fromProvider(ctx: RequestContext, store: ResponseStore, parsed: ResponsesRequest, provider: string, id: string, instructions: number, own: ChatMessage[], keep: boolean): Promise<void> {
  const adapter = ctx.deps.router.adapterNamed(provider);
  if (adapter === undefined) return ctx.fail(Errors.invalidField('previous_response_id', `The response '${id}' is kept by the provider ${provider}, which this gateway no longer has.`), 'error');
  // A revocation or the client leaving stops the reading (the provider step makes its own).
  const cancel = (ctx.cancel = new Cancel());
  let prior: ChatMessage[];
  try {
    prior = inputMessages(await nativeConversation(adapter, id, cancel), new ToolSet());
  } catch (err) {
    if (ctx.finished) return;
    if (!(err instanceof GatewayError)) throw err;
    const refused = err.param !== undefined && err.param !== null && err.param !== 'previous_response_id';
    return ctx.fail(refused ? Errors.invalidField('previous_response_id', `The response '${id}', kept by the provider ${provider}, cannot be continued on ${ctx.model ?? 'this model'}: ${err.message}`) : err, 'error');
  }
  if (ctx.finished) return;
  go(ctx, store, parsed, prior, instructions, own, keep);
}

/** Keeps the answered Response with the conversation through it; a failure is logged, the answer still goes. */
function keeper(ctx: RequestContext, store: ResponseStore, parsed: ResponsesRequest, prior: ChatMessage[], own: ChatMessage[]): (response: Record<string, unknown>) => Promise<void> {
  return async (response) => {
    const id = response.id;
    if (typeof id !== 'string') return;
    try {
      await store.put({
        id,
        project_id: ctx.projectId,
        provider: null,
        model: parsed.model,
        input_items: withIds(parsed.inputItems ?? []),
        response,
        messages: [...prior, ...own, ...outputMessages(response.output)],
      });
    } catch (err) {
      ctx.deps.log.warn({ requestId: ctx.info.requestId, responseId: id, reason: err instanceof Error ? err.message : String(err) }, 'a response could not be stored; a follow-up naming it will not find it');
    }
  };
}

/** The answer's output items as the chat messages a follow-up replays (reasoning left out, as in any input). */
function outputMessages(output: unknown): ChatMessage[] {
  if (!Array.isArray(output) || output.length === 0) return [];
  try {
    return inputMessages(output, new ToolSet());
  } catch {
    return [];
  }
}

/** Input items as input_items lists them: each with an id (one is given where the client sent none). */
function withIds(items: unknown[]): unknown[] {
  return items.map((item) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
    const record = item as Record<string, unknown>;
    if (typeof record.id === 'string') return record;
    return { id: newId(record.type === 'function_call' || record.type === 'custom_tool_call' ? 'fc' : 'msg'), ...(record.type === undefined ? { type: 'message' } : {}), ...record };
  });
}
