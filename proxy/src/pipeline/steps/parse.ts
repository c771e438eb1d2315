import { GatewayError } from '@gateway/shared';
import type { InboundProtocol } from '../../protocols/protocol.js';
import type { Route } from '../../routing/model-router.js';
import type { NativeProtocol } from '../../request/internal-request.js';
import { validateEmbeddingsRequest } from '../../protocols/openai-embeddings/validate-embeddings.js';
import { parseMessagesRequest } from '../../protocols/anthropic-messages/parse-request.js';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { RequestContext } from '../context.js';
import type { Step } from '../endpoint.js';

/**
 * parse: the endpoint's protocol turns the JSON body into the internal request, and the model's
 * route is found (an id no provider serves is answered 404 by the model-served step, once the
 * project's aliases are known). A GatewayError thrown here is the client's
 * fault and answered as it is (run.ts). A parse of the same bytes handed in (`ctx.recalled`) is
 * taken as it is; the route is found again, as the providers file may have changed since.
 */

/** The protocol's parse (validation included) into the internal request; made once per endpoint. */
export function parseWith(protocol: InboundProtocol): Step {
  // Named, as every step is, for the step clock's breakdown (step-clock.ts).
  return function parse(ctx) {
    // Named before the body is judged: a refused body's audit event still says which model it asked for.
    ctx.model = modelNamed(ctx.json);
    const parsed = ctx.recalled?.parsed ?? protocol.parse(ctx.json, ctx.raw as Buffer, nativeRoute(ctx, protocol));
    ctx.parsed = parsed;
    ctx.model = parsed.model;
    ctx.forward = parsed.raw;
    ctx.route = routeOrNull(() => ctx.deps.router.route(parsed.model));
  };
}

/**
 * The model's route, or null when no provider serves the id: the project may alias it to one
 * (model_aliases, read with its policy), so the 404 is answered by the model-served step.
 */
function routeOrNull(find: () => Route): Route | null {
  try {
    return find();
  } catch (err) {
    if (err instanceof GatewayError) return null;
    throw err;
  }
}

/** The model a project's aliases serve for `model`, from the policy this proxy already holds; else `model`. */
function aliasedModel(ctx: RequestContext, model: string): string {
  const aliases = ctx.deps.policies.peek(ctx.projectId)?.model_aliases;
  return aliases !== undefined && aliases !== null && Object.hasOwn(aliases, model) ? (aliases[model] as string) : model;
}

/** The body's `model` when it is a string (bounded as records are), else null. */
function modelNamed(json: unknown): string | null {
  const model = typeof json === 'object' && json !== null ? (json as { model?: unknown }).model : undefined;
  return typeof model === 'string' && model !== '' ? model.slice(0, 256) : null;
}

/** Whether a model's route is native for the protocol; undefined for a protocol no provider speaks. */
export function nativeRoute(ctx: RequestContext, protocol: InboundProtocol): ((model: string) => boolean) | undefined {
  const native = protocol.nativeProtocol;
  if (native === undefined) return undefined;
  return (model) => routeIsNative(ctx, aliasedModel(ctx, model), native);
}

/** An unknown model is no native route: the body's own fault is answered first, the model's 404 after it. */
function routeIsNative(ctx: RequestContext, model: string, protocol: NativeProtocol): boolean {
  try {
    return ctx.deps.router.route(model).nativeFor(protocol);
  } catch {
    return false;
  }
}

export function parseEmbeddings(ctx: RequestContext): void {
  ctx.model = modelNamed(ctx.json);
  const body = ctx.recalled?.embeddings ?? validateEmbeddingsRequest(ctx.json);
  ctx.embeddings = body;
  ctx.model = body.model;
  ctx.route = routeOrNull(() => ctx.deps.router.embeddingsRoute(body.model));
}

/** A Messages request to count: parsed as one, its model served, its prompt estimated. */
export function parseCountTokens(ctx: RequestContext): void {
  ctx.model = modelNamed(ctx.json);
  // A body POST /v1/messages would send on as it came is counted from what the gateway reads of it.
  const parsed = parseMessagesRequest(ctx.json, ctx.raw as Buffer, 'count', (model) => routeIsNative(ctx, aliasedModel(ctx, model), 'anthropic-messages'));
  ctx.parsed = parsed;
  ctx.model = parsed.model;
  ctx.route = routeOrNull(() => ctx.deps.router.route(parsed.model));
  ctx.estimate = estimatePromptTokens(parsed.chat);
}
