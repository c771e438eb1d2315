import { DEFAULT_MAX_N, Errors, GatewayError, type ProjectPolicy } from '@gateway/shared';
import { completions, oneLimitField } from '../../policy/caps.js';
import type { Reservation } from '../../policy/quota-leases.js';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import type { RequestContext } from '../context.js';
import { extrasOf } from '../request-extras.js';
import { translateScanned, type ParsedRequest } from '../../protocols/protocol.js';
import type { EmbeddingsBody } from '../../request/internal-request.js';

/**
 * admission: the project's say on a request, in order — its policy (a Map lookup, read from
 * Redis once per project), the model allow-list, the max-tokens cap, the token estimate, the
 * rate limits and the quota reservation (both local in the common case: policy/). A refusal is
 * answered here (audit outcome `policy_blocked`, or `error` when Redis could not tell).
 */

export function projectPolicy(ctx: RequestContext): void | Promise<void> {
  // Already read by an earlier step (the response cache's lookup).
  if (ctx.policy !== null) return;
  let found: ProjectPolicy | Promise<ProjectPolicy>;
  try {
    found = ctx.deps.policies.get(ctx.projectId);
  } catch {
    return unreadable(ctx);
  }
  if (!(found instanceof Promise)) {
    ctx.policy = found;
    return;
  }
  return found.then(
    (policy) => {
      ctx.policy = policy;
    },
    () => unreadable(ctx),
  );
}

function unreadable(ctx: RequestContext): void {
  ctx.fail(Errors.policyUnreadable(), 'error');
}

/**
 * The model the project serves for the one asked (its `model_aliases`: an agent's default sent to
 * another model), routed, then the allow-list on the model served. The client's answer keeps the
 * id it asked for; the records name the served one and keep the asked one (`requested_model`).
 */
export function modelServed(ctx: RequestContext): void {
  const aliases = (ctx.policy as ProjectPolicy).model_aliases;
  const asked = ctx.model as string;
  const served = aliases !== undefined && aliases !== null && Object.hasOwn(aliases, asked) ? aliases[asked] : undefined;
  if (served !== undefined && served !== asked) {
    // An alias to a model no provider serves is the project's setting: answered as that model would be.
    if (!routeTo(ctx, served)) return;
    extrasOf(ctx).requestedModel = asked;
    ctx.model = served;
  } else if (ctx.route === null && !routeTo(ctx, asked)) {
    // No provider serves the id asked for, and no alias sends it elsewhere: 404, naming what is served.
    return;
  }
  // A body parse only scanned (its route was native by the aliases this proxy held then), served
  // by a route that translates: translated now, refused if it cannot be.
  const parsed = ctx.parsed;
  if (parsed?.translate !== undefined && parsed.native !== undefined && ctx.route !== null && !ctx.route.nativeFor(parsed.native.protocol)) translateScanned(parsed);
  if (parsed?.untranslatable !== undefined && parsed.native !== undefined && ctx.route !== null && !ctx.route.nativeFor(parsed.native.protocol)) return ctx.fail(parsed.untranslatable, 'error');
  modelAllowed(ctx);
}

/** The model's route onto the request; false when no provider serves it (answered). */
function routeTo(ctx: RequestContext, model: string): boolean {
  try {
    ctx.route = ctx.endpoint === 'embeddings' ? ctx.deps.router.embeddingsRoute(model) : ctx.deps.router.route(model);
    return true;
  } catch (err) {
    ctx.fail(err as GatewayError, 'error');
    return false;
  }
}

/** Whether the project may use the model: 403 MODEL_NOT_ALLOWED if not. */
export function modelAllowed(ctx: RequestContext): void {
  const allowed = (ctx.policy as ProjectPolicy).allowed_models;
  const model = ctx.model as string;
  if (allowed === null || allowed.includes(model)) return;
  ctx.fail(Errors.modelNotAllowed(model), 'policy_blocked');
}

/**
 * Caps that hold whatever the body carries: `n` within the project's max_n (default 8); the output
 * the request may produce — max_tokens (the larger of max_tokens and max_completion_tokens when
 * both are sent) × n — within the project's max_tokens cap, else refused; a request that sets no
 * limit is given cap / n. Both limits sent: the provider receives one, `max_completion_tokens`,
 * holding the smaller (within the cap and what was reserved; caps.ts). A changed body is no
 * longer forwarded as the client's bytes.
 */
export function maxTokensCap(ctx: RequestContext): void {
  const policy = ctx.policy as ProjectPolicy;
  const parsed = ctx.parsed as ParsedRequest;
  const chat = parsed.chat;
  if (chat.max_tokens != null && chat.max_completion_tokens != null) oneLimitField(ctx, chat);
  const n = completions(parsed);
  if (n > 1 && n > (policy.max_n ?? DEFAULT_MAX_N)) return ctx.fail(Errors.nOverLimit(policy.max_n ?? DEFAULT_MAX_N), 'policy_blocked');
  const cap = policy.max_tokens_cap;
  if (cap === null) return;
  if (parsed.maxTokens !== null) {
    if (parsed.maxTokens * n > cap) ctx.fail(n > 1 ? Errors.invalidField('n', `max_tokens × n may be at most ${cap} for this project.`) : Errors.maxTokensOverCap(cap), 'policy_blocked');
    return;
  }
  const each = Math.floor(cap / n);
  if (each < 1) return ctx.fail(Errors.invalidField('n', `max_tokens × n may be at most ${cap} for this project.`), 'policy_blocked');
  chat.max_tokens = each;
  parsed.maxTokens = each;
  ctx.forward = null;
}

/**
 * The prompt's token estimate plus the output the request may produce. Made once: the
 * reservation, a stream's opening usage and a usage record without the provider's counts read it.
 */
export function estimateChat(ctx: RequestContext): void {
  const parsed = ctx.parsed as ParsedRequest;
  parsed.promptTokens = estimatePromptTokens(parsed.chat);
  ctx.estimate = parsed.promptTokens + (parsed.maxTokens ?? ctx.deps.defaultReservation) * completions(parsed);
}

/** An embeddings request produces no output: its input is the whole estimate. */
export function estimateEmbeddings(ctx: RequestContext): void {
  ctx.estimate = estimateEmbeddingsTokens((ctx.embeddings as EmbeddingsBody).input);
}

/** Rate limits, charged the estimate; counted locally, asked of Redis only near a limit. */
export function rateLimit(ctx: RequestContext): void | Promise<void> {
  const rate = ctx.deps.rateLimiter.check(ctx.policy as ProjectPolicy, ctx.keyId, ctx.estimate, Date.now());
  if (rate === null) return;
  if (!(rate instanceof Promise)) return refused(ctx, rate);
  return rate.then((result) => refused(ctx, result));
}

function refused(ctx: RequestContext, refusal: GatewayError | null): void {
  if (refusal === null || ctx.finished) return;
  ctx.fail(refusal, refusal.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error');
}

/**
 * The quota reservation of the estimate, from this proxy's lease (settled to the true count when
 * the request finishes; given back unused if the request ended meanwhile).
 */
export function quota(ctx: RequestContext): void | Promise<void> {
  const reserved = ctx.deps.quotas.reserve(ctx.policy as ProjectPolicy, ctx.estimate, Date.now());
  if (!(reserved instanceof Promise)) return reserve(ctx, reserved);
  return reserved.then((result) => reserve(ctx, result));
}

function reserve(ctx: RequestContext, reservation: Reservation | GatewayError): void {
  if (reservation instanceof GatewayError) return ctx.fail(reservation, reservation.code === 'QUOTA_EXCEEDED' ? 'policy_blocked' : 'error');
  // Revoked or abandoned while the lease was taken: nothing was used.
  if (ctx.finished) return ctx.deps.quotas.settle(reservation, 0);
  ctx.reservation = reservation;
}
