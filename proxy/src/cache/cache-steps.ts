import type { CacheEntry, ProjectPolicy } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import type { Seams } from '../pipeline/seams.js';
import { modelServed, projectPolicy, rateLimit } from '../pipeline/steps/admission.js';
import { CacheCall, type CacheResult } from './cache-call.js';
import { cacheDirectives } from './cache-control.js';
import { cacheEntryOf } from './cache-entry-of.js';
import { exactMatcher } from './answer-matcher.js';
import { replay } from './replay.js';
import { Flight, type ResponseCache } from './response-cache.js';
import { markCache } from './cache-records.js';
import { answerPolicyVersion } from './policy-version.js';
import { NAME } from '../http/wire-bytes.js';

/**
 * The response cache as four steps of the request chain (pipeline/seams.ts): `cacheRecall` before
 * parse (a body answered from the cache before, byte for byte, takes that parse and the answer
 * this proxy holds), `cacheLookup` after parse (a hit is answered there, before input guardrails
 * and admission), `cacheCollect` between the output guardrails and respond (a stream's chunks as
 * sent), `cacheStore` first of the closing steps (the finished miss stored, its single flight's
 * waiters answered). A project with the cache off costs a Map lookup and a field read of its
 * policy in `cacheRecall`, a field read in `cacheLookup`, and nothing elsewhere.
 */
/**
 * The endpoint and the version of the policy parts that decide an answer (policy-version.ts): what
 * an entry's name holds beside the project and the question, so a guardrail, cap or allow-list
 * change leaves every older entry behind.
 */
function scope(ctx: RequestContext, policy: ProjectPolicy): string {
  return `${ctx.endpoint as string}:${answerPolicyVersion(policy)}`;
}

export function cacheSeams(cache: ResponseCache): Pick<Seams, 'cacheRecall' | 'cacheLookup' | 'cacheCollect' | 'cacheStore'> {
  // The one mode built; a semantic matcher would be chosen here by `setting.mode` (answer-matcher.ts).
  const matcher = exactMatcher(cache.keys);

  /**
   * A hit known before parse: the project caches (its policy already here, no Redis read), the
   * request may read the cache, its bytes were answered from the cache before and that answer is
   * held in this proxy, young enough. The parse kept then is taken by the parse steps, and
   * `cacheLookup` serves the answer found here: the request is a hit whatever happens in between,
   * so the shared parse never reaches a step that changes a request (admission, guardrails, a
   * provider).
   */
  function cacheRecall(ctx: RequestContext): void {
    const policy = ctx.deps.policies.peek(ctx.projectId);
    if (policy === null) return;
    const setting = policy.cache;
    if (setting === undefined || setting === null || ctx.raw === null) return;
    const directives = cacheDirectives(ctx.info.cacheControl);
    if (!directives.read) return;
    const recalled = matcher.recall(ctx.projectId, scope(ctx, policy), ctx.raw);
    if (recalled === null) return;
    const now = Date.now();
    const held = cache.peek(recalled.name, now);
    if (held === null || (directives.maxAgeMs !== null && now - held.created_at > directives.maxAgeMs)) return;
    const call = new CacheCall(recalled.name, setting.ttl_seconds * 1000, true);
    call.held = held;
    ctx.cacheCall = call;
    ctx.recalled = recalled.parse;
    ctx.policy = policy;
  }

  /** The policy is read here, earlier than admission would (a Map lookup once the project is known). */
  function cacheLookup(ctx: RequestContext): void | Promise<void> {
    if (ctx.policy !== null) return decide(ctx, ctx.policy);
    const read = projectPolicy(ctx);
    if (read !== undefined) return read.then(() => afterPolicy(ctx));
    return afterPolicy(ctx);
  }

  function afterPolicy(ctx: RequestContext): void | Promise<void> {
    const policy = ctx.policy as ProjectPolicy | null;
    return ctx.finished || policy === null ? undefined : decide(ctx, policy);
  }

  function decide(ctx: RequestContext, policy: ProjectPolicy): void | Promise<void> {
    const recalled = ctx.cacheCall;
    if (recalled !== null && recalled.held !== null) return hit(ctx, recalled, recalled.held);
    const setting = policy.cache;
    if (setting === undefined || setting === null) return;
    const directives = cacheDirectives(ctx.info.cacheControl);
    if (!directives.write) return label(ctx, null, 'bypass');
    const call = new CacheCall(matcher.entryName(ctx.projectId, scope(ctx, policy), ctx.json, ctx.raw), setting.ttl_seconds * 1000, true);
    ctx.cacheCall = call;
    if (!directives.read) return label(ctx, call, 'miss');
    return find(ctx, call, directives.maxAgeMs, true);
  }

  /** This proxy's copy, else the flight answering the question, else Redis, else a new flight led. */
  function find(ctx: RequestContext, call: CacheCall, maxAgeMs: number | null, readRedis: boolean): void | Promise<void> {
    const now = Date.now();
    const held = cache.peek(call.name, now);
    if (held !== null && (maxAgeMs === null || now - held.created_at <= maxAgeMs)) return hit(ctx, call, held);
    const flight = cache.flights.get(call.name);
    if (flight !== undefined) return flight.done.then((entry) => (ctx.finished ? undefined : entry !== null ? hit(ctx, call, entry) : find(ctx, call, maxAgeMs, false)));
    if (!readRedis) return lead(ctx, call);
    return cache.get(call.name).then((entry) => {
      if (ctx.finished) return;
      const now = Date.now();
      if (entry !== null) cache.remember(call.name, entry, entry.created_at + call.ttlMs);
      if (entry !== null && (maxAgeMs === null || now - entry.created_at <= maxAgeMs)) return hit(ctx, call, entry);
      // Another identical request may have taken the lead while Redis answered.
      return find(ctx, call, maxAgeMs, false);
    });
  }

  function lead(ctx: RequestContext, call: CacheCall): void {
    const flight = new Flight();
    call.flight = flight;
    cache.flights.set(call.name, flight);
    label(ctx, call, 'miss');
  }

  /** A hit still needs the model allowed and a request's room in the rate limits; no quota or budget is touched. */
  function hit(ctx: RequestContext, call: CacheCall, entry: CacheEntry): void | Promise<void> {
    label(ctx, call, 'hit');
    modelServed(ctx);
    if (ctx.finished) return;
    const limited = rateLimit(ctx);
    if (limited !== undefined) return limited.then(() => (ctx.finished ? undefined : served(ctx, entry)));
    return served(ctx, entry);
  }

  function served(ctx: RequestContext, entry: CacheEntry): void | Promise<void> {
    if (entry.cost_usd !== null) cache.metrics.savedUsd.inc(ctx.projectId, entry.cost_usd);
    markCache(ctx, 'hit', entry.cost_usd);
    // Parsed here and changed by no step since: kept for the next request with these bytes.
    if (ctx.recalled === null && ctx.raw !== null && ctx.policy !== null) matcher.keep(ctx.projectId, scope(ctx, ctx.policy), ctx.raw, { json: ctx.json, parsed: ctx.parsed, embeddings: ctx.embeddings });
    return replay(ctx, entry, Date.now());
  }

  function label(ctx: RequestContext, call: CacheCall | null, result: CacheResult): void {
    if (call !== null) call.result = result;
    cache.metrics.lookups.inc(ctx.projectId, 1, result);
    if (result === 'hit') return;
    markCache(ctx, result, null);
    ctx.ex.extraHeaders = [[NAME.gatewayCache, result]];
  }

  /** A streamed miss: its chunks kept as the respond step sends them, up to the size bound. */
  function cacheCollect(ctx: RequestContext): void {
    const call = ctx.cacheCall;
    if (call === null || call.result !== 'miss') return;
    const result = ctx.result;
    if (result === null || !('events' in result)) return;
    call.chunks = [];
    result.events = collected(result.events, call, cache.maxEntryBytes);
  }

  function cacheStore(ctx: RequestContext): void {
    const call = ctx.cacheCall;
    if (call === null || call.result !== 'miss') return;
    const project = ctx.projectId;
    const entry = cacheEntryOf(ctx, call, cache.maxEntryBytes, Date.now());
    const stored = typeof entry === 'string' ? null : entry;
    if (stored !== null) {
      cache.store(project, call.name, stored, call.ttlMs);
      cache.remember(call.name, stored, stored.created_at + call.ttlMs);
      cache.metrics.storedBytes.inc(project, stored.body.length);
    }
    cache.metrics.stores.inc(project, 1, stored !== null ? 'stored' : (entry as string));
    const flight = call.flight;
    if (flight !== null) {
      if (cache.flights.get(call.name) === flight) cache.flights.delete(call.name);
      flight.resolve(stored);
    }
  }

  return { cacheRecall, cacheLookup, cacheCollect, cacheStore };
}

/** The stream as it was, its chunks copied on the way (dropped past the bound: then served, not stored). */
async function* collected(source: AsyncIterable<string>, call: CacheCall, maxBytes: number): AsyncGenerator<string> {
  for await (const data of source) {
    const chunks = call.chunks;
    if (chunks !== null) {
      call.bytes += data.length;
      if (call.bytes > maxBytes) {
        call.chunks = null;
        call.tooLarge = true;
      } else chunks.push(data);
    }
    yield data;
  }
  call.complete = true;
}
