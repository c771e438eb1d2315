import { performance } from 'node:perf_hooks';
import { newRecordId, type AuditOutcome, type GatewayEndpoint, type GatewayError, type KeyRecord, type ModelPrice, type ProjectPolicy, type ProxyConfig } from '@gateway/shared';
import type { Logger } from 'pino';
import type { AuthThrottle } from '../auth/auth-throttle.js';
import type { CacheCall } from '../cache/cache-call.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { InFlightEntry, InFlightRegistry, Revocable } from '../auth/in-flight.js';
import type { GuardrailRuntime } from '../guardrails/runtime.js';
import type { InvalidationSubscriber } from '../auth/invalidation-subscriber.js';
import type { KeyCache } from '../auth/key-cache.js';
import type { Exchange } from '../http/exchange.js';
import type { ProxyMetrics } from '../metrics.js';
import type { ProjectPolicies } from '../policy/project-policies.js';
import type { QuotaLeases, Reservation } from '../policy/quota-leases.js';
import type { BudgetHold, BudgetLeases } from '../policy/budget-leases.js';
import type { RateLimiter } from '../policy/rate-limiter.js';
import type { Cancel } from '../providers/cancel.js';
import type { ChatRequest, CompletionResult, EmbeddingsBody, EmbeddingsRequest, EmbeddingsResult, StreamMeta, StreamResult } from '../request/internal-request.js';
import type { ParsedRequest, StreamWriter } from '../protocols/protocol.js';
import type { RecordSink } from '../records/record-sink.js';
import type { ResponseStore } from '../responses/response-store.js';
import type { BatchServices } from '../batches/batch-services.js';
import type { FileUpload } from '../batches/file-upload.js';
import type { CoolingLog, ModelRouter, Route, Target } from '../routing/model-router.js';
import type { GatewayTracer, RequestTrace } from '../tracing/request-trace.js';
import type { Endpoint } from './endpoint.js';
import type { RequestExtras } from './request-extras.js';
import type { UsageOutcome } from './request-records.js';
import { run } from './run.js';
import type { StepClock, StepTimes } from './step-clock.js';
import { clientGone, crashed, fail, finish, revoke } from './exits.js';

/** Everything a gateway request needs, built once at start. */
export interface GatewayDeps {
  config: ProxyConfig;
  cache: KeyCache;
  subscriber: InvalidationSubscriber;
  inFlight: InFlightRegistry;
  router: ModelRouter;
  records: RecordSink;
  metrics: ProxyMetrics;
  log: Logger;
  policies: ProjectPolicies;
  quotas: QuotaLeases;
  budgets: BudgetLeases;
  rateLimiter: RateLimiter;
  /** Output tokens reserved for a request that sets no max_tokens (and has no cap). */
  defaultReservation: number;
  /** Longest time cached keys are served while the invalidation channel is down. */
  keyStaleBoundMs: number;
  /** draining: refuse new requests; active: requests not yet finished. */
  state: { draining: boolean; active: number };
  /** Null when tracing is off. */
  tracer: GatewayTracer | null;
  /** Guardrails (compiled lists, moderation providers, counters); absent: the steps do nothing. */
  guardrails?: GuardrailRuntime;
  /** Failed authentications per client address; null when AUTH_FAILURE_LIMIT=0. */
  authThrottle: AuthThrottle | null;
  /** The response cache (cache/); absent or null: no cache steps in the chains at all. */
  responseCache?: ResponseCache | null;
  /** Stored Responses API state (responses/response-store.ts); absent or null without a control plane. */
  responses?: ResponseStore | null;
  /** Files and batches (batches/); absent or null without a control plane. */
  batches?: BatchServices | null;
  /** The bench's wall-clock breakdown (STEP_TIMES_FILE); absent or null: no request carries a clock. */
  stepTimes?: StepTimes | null;
}

/** What the HTTP layer read from the request line and headers (only valid inside its callback). */
export interface RequestInfo {
  requestId: string;
  /** The request id came from the client (else it is a fresh UUIDv7, reused as the record id). */
  clientRequestId: boolean;
  apiKey: string;
  /** The refusal naming what the headers held instead of a key (auth/key-hints.ts), when there was none; null otherwise. */
  missingKey: GatewayError | null;
  clientIp: string;
  userAgent: string;
  /** The body is declared JSON, or its type is not declared (a form or text body is refused). */
  jsonBody: boolean;
  /** The declared content-length (0 when none). */
  contentLength: number;
  /** The `x-gateway-tags` header, '' when absent (read by the tags step, attribution/attribute.ts). */
  tags: string;
  /** The request's Cache-Control header ('' when none), read by the response cache. */
  cacheControl: string;
  /**
   * The client's headers of a provider's own API (`anthropic-*` on /v1/messages), for a native
   * request to carry; null when there are none or the endpoint has no native path.
   */
  providerHeaders: [string, string][] | null;
  /** The query string as sent ('' when none), for a native request to carry (and the stored-response routes' paging). */
  query: string;
  /** The route's `:id` parameter ('' on routes without one). */
  pathId: string;
  /**
   * The hash of the key a batch line runs with (batches/batch-line.ts): the proxy holds no
   * batch's key itself, only the hash the key cache is keyed by. Null for a request over HTTP.
   */
  keyHash: string | null;
  /** The Content-Type header as sent, read only on the routes that take other bodies than JSON (a file upload); '' elsewhere. */
  contentType: string;
  /** The Host header, read only where an answer names the gateway's own address (a message batch's `results_url`); '' elsewhere. */
  host: string;
}

/**
 * What the parse steps made of a body, kept to be given to a later request whose body is the same
 * bytes (the response cache's repeated questions). Shared by every request it is given to, so it
 * is only ever read: it comes from a request answered from the cache, which no step after parse
 * changed, and is given only to requests that will be answered from the cache too.
 */
export interface RecalledParse {
  readonly json: unknown;
  readonly parsed: ParsedRequest | null;
  readonly embeddings: EmbeddingsBody | null;
}

/** The outcome of a key check: the record, the refusal, or a promise of either (Redis asked). */
export type KeyCheck = KeyRecord | GatewayError | Promise<KeyRecord | GatewayError>;

/**
 * The one object a request carries through its endpoint's steps (endpoints.ts). Steps read and
 * fill its fields in order; nothing else holds request state. Every field exists from the start
 * (null until its step sets it), so every request has the same shape whatever its endpoint.
 * The ways out (fail, finish, revoke, client gone) are exits.ts, shared by every endpoint.
 */
export class RequestContext implements Revocable, CoolingLog {
  /** Record id of the audit event and usage record: the generated request id when there is one. */
  readonly id: string;
  readonly startedAt = performance.now();
  /** Index of the step running now (run.ts resumes from it). */
  step = 0;
  finished = false;
  /** The key was adopted: from now on a client leaving stops the provider (which ends the request). */
  admitted = false;
  revoked = false;
  registered = false;
  inFlightEntry: InFlightEntry | null = null;

  // authenticate
  auth: KeyCheck | null = null;
  authEpoch = -1;
  key: KeyRecord | null = null;
  /**
   * The presented key's record when the proxy already knows it, even if the request is refused
   * before admission (keys unverifiable, draining): the project's audit trail must show it.
   */
  knownKey: KeyRecord | null = null;

  // parse
  raw: Buffer | null = null;
  /** A parse of these exact bytes made before (cache/cache-steps.ts `cacheRecall`): the parse steps take it as theirs. */
  recalled: RecalledParse | null = null;
  json: unknown = null;
  model: string | null = null;
  parsed: ParsedRequest | null = null;
  embeddings: EmbeddingsBody | null = null;
  route: Route | null = null;

  // admission
  policy: ProjectPolicy | null = null;
  /** Prompt tokens plus the output the request may produce: what rate limits and quota are charged. */
  estimate = 0;
  /**
   * Per target of the route, the parameters its translation leaves out, as the
   * `x-gateway-dropped-params` value (steps/translation.ts); null when no target drops any.
   */
  dropped: ReadonlyMap<Target, string> | null = null;
  /** Keeps a Responses answer (responses/state-step.ts), awaited by the respond step before the answer's last bytes; null: nothing kept. */
  keepAnswer: ((response: Record<string, unknown>) => Promise<void>) | null = null;
  /** Remembers a native Response's id with its provider (responses/state-step.ts), awaited as keepAnswer is. */
  keepNative: ((responseId: string) => Promise<void>) | null = null;
  /** The one provider entry the request may go to (a native response continued where it lives); null: any of the route's. */
  pinnedProvider: string | null = null;
  /** The bytes sent to the provider when it takes the internal request as it is. */
  forward: Buffer | null = null;
  /** Tokens reserved against the project's quota; settled to the true count when the request finishes. */
  reservation: Reservation | null = null;
  /** Dollars reserved in the project's budgets (steps/budgets.ts); settled to the cost when the request finishes. */
  budgetHold: BudgetHold | null = null;

  // route + failover + provider
  provider: string | null = null;
  attempts = 0;
  /** Providers tried, in order. */
  readonly tried: string[] = [];
  /** Providers of the route that were in a cooldown when it was planned; null (no list) when none were. */
  coolingProviders: string[] | null = null;
  /** Stops the provider call (set once one is made). */
  cancel: Cancel | null = null;
  /** The request the provider tried last was sent (null: no provider was called). */
  request: ChatRequest | EmbeddingsRequest | null = null;
  /** The price of the model at the provider tried last (the one that served, if one did). */
  price: ModelPrice | null = null;
  result: CompletionResult | StreamResult | EmbeddingsResult | null = null;

  // respond
  meta: StreamMeta | null = null;
  writer: StreamWriter | null = null;

  /** A file upload being received (batches/file-upload.ts); null on every other route. */
  upload: FileUpload | null = null;

  /** The response cache's state for this request (cache/cache-call.ts); null when the project does not cache. */
  cacheCall: CacheCall | null = null;

  /** This request's trace; null when tracing is off. */
  trace: RequestTrace | null = null;

  /** This request's step clock (step-clock.ts); null unless the bench asked for the breakdown. */
  readonly clock: StepClock | null;

  /** Tags, end user, cache and guardrail facts for the records; null until a step has one (request-extras.ts). */
  extras: RequestExtras | null = null;

  // how it ended (set once by finish, read by the closing steps)
  outcome: AuditOutcome = 'success';
  status = 0;
  errorCode: string | null = null;
  usage: UsageOutcome | undefined = undefined;
  /** Milliseconds from arrival to finish. */
  elapsedMs = 0;

  constructor(
    readonly deps: GatewayDeps,
    readonly ex: Exchange,
    readonly info: RequestInfo,
    /** The endpoint's chain of steps (endpoints.ts). */
    readonly chain: Endpoint,
  ) {
    this.id = info.clientRequestId ? newRecordId() : info.requestId;
    this.clock = deps.stepTimes?.clock(this.startedAt) ?? null;
    deps.state.active++;
  }

  /** The inbound API (null: not a model request). */
  get endpoint(): GatewayEndpoint | null {
    return this.chain.name;
  }

  get keyId(): string {
    return this.key?.id ?? '';
  }

  get projectId(): string {
    return this.key?.project_id ?? '';
  }

  /** Runs the endpoint's steps from `from` on (run.ts). */
  run(from = 0): void {
    run(this, from);
  }

  fail(err: GatewayError, outcome: AuditOutcome, usage?: UsageOutcome): void {
    fail(this, err, outcome, usage);
  }

  finish(outcome: AuditOutcome, status: number, errorCode: string | null, usage?: UsageOutcome): void {
    finish(this, outcome, status, errorCode, usage);
  }

  revoke(reason?: GatewayError): void {
    revoke(this, reason);
  }

  clientGone(): void {
    clientGone(this);
  }

  /** Route.plan() names the providers it found in a cooldown (routing/model-router.ts). */
  cooling(provider: string): void {
    (this.coolingProviders ??= []).push(provider);
  }

  crashed(err: unknown): void {
    crashed(this, err);
  }
}
