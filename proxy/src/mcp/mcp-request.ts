import { performance } from 'node:perf_hooks';
import { Errors, GatewayError, newRecordId, type AuditOutcome, type KeyRecord, type ProjectPolicy } from '@gateway/shared';
import type { InFlightEntry, Revocable } from '../auth/in-flight.js';
import type { GatewayDeps } from '../pipeline/context.js';
import type { Exchange } from '../http/exchange.js';
import { NANOS_PER_USD, type BudgetHold } from '../policy/budget-leases.js';
import type { Reservation } from '../policy/quota-leases.js';
import { Cancel } from '../providers/cancel.js';
import type { RequestExtras } from '../pipeline/request-extras.js';
import type { ToolTrace } from '../tracing/request-trace.js';
import { gatewayErrorMessage, type RequestId } from './jsonrpc.js';
import { KeyCheck } from './key-check.js';
import type { McpRequestInfo } from './mcp-request-info.js';
import { mcpAuditEvent, mcpUsageRecord, type McpFacts, type ToolAnswer } from './mcp-records.js';
import type { McpUpstream } from './mcp-upstreams.js';

/** Longest server, tool or method name a record keeps (the writer's bound). */
export const MAX_NAME = 256;

/** Status recorded for a request whose client went away before its answer. */
const CLIENT_CLOSED = 499;

const JSON_TYPE = [['content-type', 'application/json']] as const;

/**
 * One request on `/mcp` or `/mcp/{server}`, from its headers to its records. It is what the
 * in-flight registry revokes: a key deleted mid-call ends it at once (an open stream gets a
 * JSON-RPC error for the pending request, naming UNAUTHORIZED, and closes) and cancels the
 * server's work. Whichever way it ends, `finish` runs once: one audit event, and one usage record
 * when a tools/call reached its server.
 */
export class McpRequest implements Revocable, McpFacts {
  readonly id: string;
  readonly startedAt = performance.now();
  readonly auth: KeyCheck;
  key: KeyRecord | null = null;
  finished = false;
  server: string;
  tool: string | null = null;
  method: string;
  /** The id of the JSON-RPC request awaiting its answer (the one a revocation answers). */
  rpcId: RequestId | null = null;
  /** The server a request was sent to, and the session it was sent in (to cancel its work). */
  upstream: McpUpstream | null = null;
  upstreamSession = '';
  upstreamProtocol = '';
  reached = false;
  /** How the server answered a tools/call. */
  answer: ToolAnswer = null;
  streamed = false;
  /** Stops the server request (client gone, key revoked). */
  readonly cancel = new Cancel();
  trace: ToolTrace | null = null;
  private registered = false;
  inFlightEntry: InFlightEntry | null = null;
  /** What a tools/call holds of the project's quota and budgets until it ends (tool-admission.ts). */
  quotaHold: Reservation | null = null;
  budgetHold: BudgetHold | null = null;
  /** Guardrail decisions for the audit event (tool-guardrails.ts); null until a guard decided something. */
  extras: RequestExtras | null = null;
  /** A guardrail masked the tool call's arguments: the message goes re-serialised, not as its bytes. */
  argumentsMasked = false;

  constructor(
    readonly deps: GatewayDeps,
    readonly ex: Exchange,
    readonly info: McpRequestInfo,
    method: string,
  ) {
    this.id = info.clientRequestId ? newRecordId() : info.requestId;
    // The path's server and the client's method and tool names are recorded: bounded, as records are.
    this.server = info.server === null ? '*' : info.server.slice(0, MAX_NAME);
    this.method = method;
    this.auth = new KeyCheck(deps, info.apiKey);
    deps.state.active++;
  }

  get keyId(): string {
    return this.key?.id ?? '';
  }

  get projectId(): string {
    return this.key?.project_id ?? '';
  }

  /** What a guard (a webhook's payload) is told the request is for: the tool. */
  get model(): string | null {
    return this.tool;
  }

  /**
   * The key, registered for revocation; null when the request was refused (and answered). A
   * promise only when the key check waits on Redis.
   */
  admit(): KeyRecord | null | Promise<KeyRecord | null> {
    const result = this.auth.result();
    return result instanceof Promise ? result.then((r) => this.admitted(r)) : this.admitted(result);
  }

  private admitted(result: KeyRecord | GatewayError): KeyRecord | null {
    if (this.finished) return null;
    if (result instanceof GatewayError) {
      // Counted against the client's address as a model endpoint's 401 is (auth/auth-throttle.ts).
      if (result.code === 'UNAUTHORIZED') this.deps.authThrottle?.failed(this.info.clientIp);
      this.fail(result, result.code === 'UNAVAILABLE' ? 'error' : 'auth_failed');
      return null;
    }
    this.key = result;
    this.deps.inFlight.add(this, result.expires_at);
    this.registered = true;
    return result;
  }

  /** The project's policy (held in process: no promise; Redis read once per project and change). */
  policy(): ProjectPolicy | null | Promise<ProjectPolicy | null> {
    let found: ProjectPolicy | Promise<ProjectPolicy>;
    try {
      found = this.deps.policies.get(this.projectId);
    } catch {
      return this.policyUnreadable();
    }
    if (!(found instanceof Promise)) return this.finished ? null : found;
    return found.then(
      (policy) => (this.finished ? null : policy),
      () => this.policyUnreadable(),
    );
  }

  private policyUnreadable(): null {
    this.fail(Errors.policyUnreadable(), 'error');
    return null;
  }

  /**
   * Refuses with an HTTP error whose body is a JSON-RPC error (what MCP clients read), or, once a
   * stream has started, with that error as its last event for the pending request.
   */
  fail(err: GatewayError, outcome: AuditOutcome): void {
    if (this.finished) return;
    if (this.ex.headersSent) {
      if (this.rpcId !== null) this.ex.write(`event: message\ndata: ${gatewayErrorMessage(this.rpcId, err)}\n\n`);
      this.ex.endStream();
      this.finish(outcome, 200, err.code);
      return;
    }
    const headers: [string, string][] = [['content-type', 'application/json']];
    if (err.retryAfter !== undefined) headers.push(['retry-after', String(err.retryAfter)]);
    this.ex.sendWith(err.status, headers, gatewayErrorMessage(this.rpcId, err));
    this.finish(outcome, err.status, err.code);
  }

  /** A refusal of one JSON-RPC request, answered in JSON-RPC with HTTP 200 (a tool not allowed). */
  refuseCall(err: GatewayError, rpcCode: number): void {
    if (this.finished) return;
    this.ex.sendWith(200, JSON_TYPE, gatewayErrorMessage(this.rpcId, err, rpcCode));
    this.finish('policy_blocked', 200, err.code);
  }

  revoke(reason: GatewayError = Errors.keyDeleted()): void {
    if (this.finished) return;
    if (reason.code === 'UNAUTHORIZED') this.deps.metrics.revocations.inc();
    this.stopUpstream();
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error');
  }

  clientGone(): void {
    if (this.finished) return;
    this.stopUpstream();
    this.finish('cancelled', CLIENT_CLOSED, null);
  }

  /**
   * Aborts the server request and, when it was a request the server may still be working on,
   * tells the server so (notifications/cancelled in its session): closing a stream alone does not
   * stop a tool.
   */
  private stopUpstream(): void {
    this.cancel.abort();
    const upstream = this.upstream;
    if (upstream === null || this.rpcId === null || this.answer !== null || !this.reached) return;
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: this.rpcId, reason: 'The gateway ended the request.' } });
    upstream
      .send({ method: 'POST', sessionId: this.upstreamSession, protocolVersion: this.upstreamProtocol, accept: 'application/json, text/event-stream', body, cancel: new Cancel() })
      .then((res) => res.body(), () => null)
      .catch(() => null);
  }

  finish(outcome: AuditOutcome, status: number, errorCode: string | null): void {
    if (this.finished) return;
    this.finished = true;
    if (this.registered) this.deps.inFlight.remove(this);
    this.deps.state.active--;
    const elapsed = performance.now() - this.startedAt;
    const latencyMs = Math.round(elapsed);
    const timestamp = Date.now();
    const { records, metrics } = this.deps;
    const charged = this.reached && this.tool !== null && this.key !== null;
    // The provider label names a server only for what leaves a usage record, as for models.
    metrics.perRequest.record(status, 'none', charged ? this.server : 'none', 'mcp', elapsed / 1000);
    // Tool calls use no tokens; a budget is charged the tool's price when the call reached its server.
    if (this.quotaHold !== null) this.deps.quotas.settle(this.quotaHold, 0);
    if (this.budgetHold !== null) this.deps.budgets.settle(this.budgetHold, charged ? Math.round((this.upstream?.pricePerCall ?? 0) * NANOS_PER_USD) : 0);
    const key = this.key ?? this.auth.known;
    records.pushAudit(mcpAuditEvent(this, key, outcome, status, errorCode, timestamp, latencyMs, this.extras?.guardrails ?? null));
    if (charged && this.key !== null && this.tool !== null) {
      records.pushUsage(mcpUsageRecord(this, this.key, this.tool, this.answer, this.streamed, this.upstream?.pricePerCall ?? null, timestamp, latencyMs));
    }
    this.trace?.end(outcome, status, errorCode);
  }

  /** Last resort for a bug below: answer 500 and keep the process and the records whole. */
  crashed(err: unknown): void {
    this.cancel.abort();
    this.deps.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'MCP request failed unexpectedly');
    this.fail(Errors.internal(), 'error');
  }
}
