import { Errors, GatewayError } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import type { ResponsesRequest } from '../protocols/openai-responses/parse-request.js';
import { inputMessages } from '../protocols/openai-responses/input-items.js';
import { newId } from '../protocols/openai-responses/response-object.js';
import { ToolSet } from '../protocols/openai-responses/tools.js';
import type { ChatMessage } from '../request/openai-chat.js';
import type { ResponseStore, StoredResponse } from './response-store.js';

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
  if (parsed.native !== undefined && ctx.route?.nativeFor('openai-responses') === true) return;
  const store = ctx.deps.responses ?? null;
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

function continued(ctx: RequestContext, store: ResponseStore, parsed: ResponsesRequest, found: StoredResponse | null, id: string, instructions: number, own: ChatMessage[], keep: boolean): void {
  if (found === null) return ctx.fail(Errors.invalidField('previous_response_id', `Previous response with id '${id}' not found.`), 'error');
  if (found.messages === null) {
    return ctx.fail(Errors.invalidField('previous_response_id', `The response '${id}' is kept by the provider ${found.provider ?? ''}: continue it with a model that provider serves natively.`), 'error');
  }
  const prior = found.messages;
  parsed.chat.messages = [...parsed.chat.messages.slice(0, instructions), ...prior, ...own];
  if (keep) ctx.keepAnswer = keeper(ctx, store, parsed, prior, own);
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
