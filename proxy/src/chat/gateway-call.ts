import { performance } from 'node:perf_hooks';
import {
  GatewayError,
  looksLikeApiKey,
  newRecordId,
  type AuditOutcome,
  type GatewayEndpoint,
  type KeyRecord,
  type ProjectPolicy,
  type ProxyConfig,
} from '@gateway/shared';
import type { Logger } from 'pino';
import type { InFlightRegistry, Revocable } from '../auth/in-flight.js';
import type { Cancel } from '../providers/cancel.js';
import type { ErrorShape } from '../protocols/protocol.js';
import type { InvalidationSubscriber } from '../auth/invalidation-subscriber.js';
import type { ProjectPolicies } from '../policy/project-policies.js';
import type { QuotaLeases, Reservation } from '../policy/quota-leases.js';
import type { RateLimiter } from '../policy/rate-limiter.js';
import type { KeyCache } from '../auth/key-cache.js';
import type { Exchange } from '../http/exchange.js';
import { auditEvent, usageRecord, type UsageOutcome } from './request-records.js';
import type { ProxyMetrics } from '../metrics.js';
import type { RecordSink } from '../records/record-sink.js';
import type { ModelRouter } from '../routing/model-router.js';
import type { GatewayTracer, RequestTrace } from '../tracing/request-trace.js';
import type { AuthThrottle } from '../auth/auth-throttle.js';
import { malformedKeyMessage } from '../auth/key-hints.js';

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
  rateLimiter: RateLimiter;
  /** Output tokens reserved for a request that sets no max_tokens (and has no cap). */
  defaultReservation: number;
  /** Longest time cached keys are served while the invalidation channel is down. */
  keyStaleBoundMs: number;
  /** draining: refuse new requests; active: requests not yet finished. */
  state: { draining: boolean; active: number };
  /** Null when tracing is off. */
  tracer: GatewayTracer | null;
  /** Failed authentications per client address; null when AUTH_FAILURE_LIMIT=0. */
  authThrottle: AuthThrottle | null;
}

/** The outcome of a key check: the record, the refusal, or a promise of either (Redis asked). */
type KeyCheck = KeyRecord | GatewayError | Promise<KeyRecord | GatewayError>;

/** What the HTTP layer read from the request line and headers (only valid inside its callback). */
export interface RequestInfo {
  requestId: string;
  /** The request id came from the client (else it is a fresh UUIDv7, reused as the record id). */
  clientRequestId: boolean;
  apiKey: string;
  /** Why no key was found (auth/key-hints.ts), when none was; null otherwise. */
  missingKey: string | null;
  clientIp: string;
  userAgent: string;
  /** The body is declared JSON, or its type is not declared (a form or text body is refused). */
  jsonBody: boolean;
}

export type { UsageOutcome };

/**
 * The life of one gateway request: authenticate, do the work, and on every way out (success,
 * refusal, error, client gone, key revoked) produce exactly one audit event and, when a provider
 * was called, exactly one usage record.
 */
export abstract class GatewayCall implements Revocable {
  /** Record id of the audit event and usage record: the generated request id when there is one. */
  readonly id: string;
  readonly startedAt = performance.now();
  key: KeyRecord | null = null;
  model: string | null = null;
  provider: string | null = null;
  finished = false;
  revoked = false;
  private registered = false;
  private authEpoch = -1;
  private auth: KeyCheck | null = null;
  /**
   * The presented key's record when the proxy already knows it, even if the request is refused
   * before admission (keys unverifiable, draining): the project's audit trail must show it.
   */
  private knownKey: KeyRecord | null = null;
  /** Provider attempts made (failover may make several) and the providers tried, in order. */
  attempts = 0;
  readonly tried: string[] = [];
  /** Providers of the route that were in a cooldown when it was planned; null (no list) when none were. */
  coolingProviders: string[] | null = null;
  /** Stops the provider call (set once one is made). */
  protected cancel: Cancel | null = null;
  /** Tokens reserved against the project's quota; settled to the true count in finish(). */
  protected reservation: Reservation | null = null;
  /** This request's trace; null when tracing is off. */
  trace: RequestTrace | null = null;

  constructor(
    protected readonly deps: GatewayDeps,
    protected readonly ex: Exchange,
    readonly info: RequestInfo,
    /** How this request's API words errors (the OpenAI shape unless the endpoint has its own). */
    private readonly errors: ErrorShape,
  ) {
    this.id = info.clientRequestId ? newRecordId() : info.requestId;
    deps.state.active++;
  }

  /** The inbound API (null: not a model request). */
  get endpoint(): GatewayEndpoint | null {
    return null;
  }

  get keyId(): string {
    return this.key?.id ?? '';
  }

  /** Attributes the request to its key if the proxy knows it, without asking Redis. */
  identify(): void {
    const apiKey = this.info.apiKey;
    if (this.key === null && this.knownKey === null && apiKey !== '' && looksLikeApiKey(apiKey)) {
      this.knownKey = this.deps.cache.peekPresented(apiKey);
    }
  }

  get projectId(): string {
    return this.key?.project_id ?? '';
  }

  /**
   * Starts checking the presented key (a Map lookup for a known key, a Redis GET otherwise) while
   * the body arrives; `admitted()` takes the result.
   */
  authenticate(): void {
    this.auth = this.checkKey();
  }

  /** Whether the key is known now, without waiting (a refusal before the body is read uses it). */
  protected get knownNow(): KeyRecord | null {
    const auth = this.auth;
    return auth === null || auth instanceof GatewayError || auth instanceof Promise ? null : auth;
  }

  private checkKey(): KeyCheck {
    const apiKey = this.info.apiKey;
    if (apiKey === '') return new GatewayError('UNAUTHORIZED', this.info.missingKey ?? 'No API key.');
    if (!looksLikeApiKey(apiKey)) return new GatewayError('UNAUTHORIZED', malformedKeyMessage(apiKey));
    const now = Date.now();
    if (!this.deps.subscriber.trusted(now, this.deps.keyStaleBoundMs)) {
      this.knownKey = this.deps.cache.peekPresented(apiKey);
      return new GatewayError('UNAVAILABLE', 'Keys cannot be verified right now; retry shortly.', { retryAfter: 1 });
    }
    this.authEpoch = this.deps.cache.currentEpoch;
    const found = this.deps.cache.lookupPresented(apiKey, now);
    if (found === null) return this.invalidKey(apiKey);
    if (!(found instanceof Promise)) return found;
    return found.then(
      (record) => {
        this.authEpoch = this.deps.cache.currentEpoch;
        return record ?? this.invalidKey(apiKey);
      },
      () => new GatewayError('UNAVAILABLE', 'Keys cannot be verified right now; retry shortly.', { retryAfter: 1 }),
    );
  }

  /** 401; a key this proxy knows was deleted still names its project and key in the audit event. */
  private invalidKey(apiKey: string): GatewayError {
    this.knownKey = this.deps.cache.deadRecord(apiKey);
    return new GatewayError('UNAUTHORIZED', this.knownKey !== null ? 'The API key was deleted or has expired.' : 'The API key is not valid: no such key.');
  }

  /**
   * Adopts the key and registers the request for revocation. If any invalidation was applied
   * since the key was looked up, the lookup is repeated first: the key may be the one deleted.
   */
  protected async admitted(): Promise<boolean> {
    const auth = this.auth ?? this.checkKey();
    let result = auth instanceof Promise ? await auth : auth;
    if (this.finished) return false;
    if (!(result instanceof GatewayError) && this.authEpoch !== this.deps.cache.currentEpoch) {
      const again = this.checkKey();
      result = again instanceof Promise ? await again : again;
    }
    if (this.finished) return false;
    if (result instanceof GatewayError) {
      if (result.code === 'UNAUTHORIZED') this.deps.authThrottle?.failed(this.info.clientIp);
      this.fail(result, result.code === 'UNAVAILABLE' ? 'error' : 'auth_failed');
      return false;
    }
    this.key = result;
    // An expiring key dies at its moment with no message to announce it, streams included: the
    // registry holds one timer per expiring key with requests in flight.
    this.deps.inFlight.add(this, result.expires_at);
    this.registered = true;
    return true;
  }

  abstract revoke(reason?: GatewayError): void;

  /** Route.plan() names the providers it found in a cooldown (routing/model-router.ts). */
  cooling(provider: string): void {
    (this.coolingProviders ??= []).push(provider);
  }

  // ── Refusal before the body (http/auth-gate.ts) ──

  /**
   * The key check's refusal (no key, or not a valid one), now or once Redis has answered; null
   * when the key is good or the check cannot decide (keys unverifiable: the body is read and the
   * usual 503 given).
   */
  keyRefusal(): GatewayError | Promise<GatewayError | null> | null {
    const auth = this.auth;
    if (auth instanceof Promise) return auth.then(unauthorized);
    return unauthorized(auth);
  }

  /**
   * Answers the key check's 401 without reading the body (uWebSockets.js drops the rest of it as
   * it arrives and keeps the connection: closing it would reset a client still sending).
   */
  refuseBeforeBody(err: GatewayError): void {
    if (this.finished) return;
    this.deps.authThrottle?.failed(this.info.clientIp);
    this.fail(err, 'auth_failed');
  }

  /** The admitted key's project policy, or null when the request was answered (or ended) instead. */
  protected async projectPolicy(): Promise<ProjectPolicy | null> {
    try {
      const found = this.deps.policies.get(this.projectId);
      const policy = found instanceof Promise ? await found : found;
      return this.finished ? null : policy;
    } catch {
      this.fail(new GatewayError('UNAVAILABLE', 'The project policy cannot be read right now; retry shortly.', { retryAfter: 1 }), 'error');
      return null;
    }
  }

  /** Last resort for a bug below: answer 500 and keep the process and the records whole. */
  crashed(err: unknown): void {
    this.cancel?.abort();
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      // JSON nested thousands of levels deep parses, then overflows the stack of whatever walks
      // it next: the client's body is at fault, not the gateway.
      this.fail(new GatewayError('INVALID_REQUEST', 'The body is nested too deeply.', { param: 'body' }), 'error');
      return;
    }
    this.deps.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'request failed unexpectedly');
    this.fail(new GatewayError('INTERNAL'), 'error');
  }

  protected static keyDeleted(): GatewayError {
    return new GatewayError('UNAUTHORIZED', 'The API key was deleted.');
  }

  /** Answers with an error (if nothing was sent yet) and finishes. */
  fail(err: GatewayError, outcome: AuditOutcome, usage?: UsageOutcome): void {
    if (this.finished) return;
    if (this.ex.headersSent) {
      // Mid-stream: the protocol's error event and no end marker, so the client knows the answer is cut.
      this.ex.write(this.streamErrorText(err));
      this.ex.endStream();
      this.finish(outcome, 200, err.code, usage);
      return;
    }
    const closeConnection = err.code === 'PAYLOAD_TOO_LARGE' || this.deps.state.draining;
    this.ex.send(err.status, 'application/json', this.errors.errorBody(err), err.retryAfter, closeConnection);
    this.finish(outcome, err.status, err.code, usage);
  }

  /** The protocol's error event for a started stream. */
  protected streamErrorText(err: GatewayError): string {
    return this.errors.streamError(err);
  }

  finish(outcome: AuditOutcome, status: number, errorCode: string | null, usage?: UsageOutcome): void {
    if (this.finished) return;
    this.finished = true;
    if (this.registered) this.deps.inFlight.remove(this);
    if (this.reservation !== null) this.deps.quotas.settle(this.reservation, usage === undefined ? 0 : usage.input + usage.output);
    const { metrics, records } = this.deps;
    const elapsed = performance.now() - this.startedAt;
    const latencyMs = Math.round(elapsed);
    const timestamp = Date.now();
    this.deps.state.active--;
    metrics.perRequest.record(status, this.provider === null ? 'none' : (this.model ?? 'none'), this.provider ?? 'none', this.endpoint ?? 'models', elapsed / 1000);
    const key = this.key ?? this.knownKey;
    records.pushAudit(auditEvent(this, key, outcome, status, errorCode, timestamp, latencyMs));
    if (usage !== undefined && this.key !== null && this.provider !== null && this.model !== null) {
      records.pushUsage(usageRecord(this, this.key, this.model, this.provider, usage, timestamp, latencyMs));
    }
    this.trace?.end(outcome, status, errorCode, usage);
  }
}

function unauthorized(check: KeyRecord | GatewayError | null): GatewayError | null {
  return check instanceof GatewayError && check.code === 'UNAUTHORIZED' ? check : null;
}
