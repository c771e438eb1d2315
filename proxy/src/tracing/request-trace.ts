import type { AuditOutcome, GatewayEndpoint } from '@gateway/shared';
import type { UsageOutcome } from '../pipeline/request-records.js';
import type { HttpRequest } from '../http/uws.js';
import type { ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, ProviderAdapter, StreamResult } from '../providers/adapter.js';

/**
 * What the request path tells tracing, at a few points of a request's life. With tracing off the
 * tracer is null and each point costs one null check: nothing of OpenTelemetry is loaded
 * (start-tracing.ts imports it only when an endpoint is configured).
 */
export interface GatewayTracer {
  /**
   * A request arrived (called inside the uWebSockets.js callback, where `req` is valid): its span
   * starts, continuing the caller's W3C trace context if it sent one.
   */
  start(call: TracedCall, req: HttpRequest, method: string, route: string): RequestTrace;
  /** An MCP tools/call: an `execute_tool` span (tool-trace.ts), continuing the caller's context. */
  tool(start: ToolSpanStart): ToolTrace;
  /** Exports what is buffered and stops. */
  close(): Promise<void>;
}

/** The call as its trace reads it (GatewayCall satisfies it). */
export interface TracedCall {
  readonly info: { readonly requestId: string };
  readonly endpoint: GatewayEndpoint | null;
  readonly model: string | null;
  readonly provider: string | null;
  readonly projectId: string;
  readonly keyId: string;
  /** Tags and end user (the tags step); null when the request has neither. */
  readonly extras: { readonly tags: Readonly<Record<string, string>> | null; readonly endUser: string | null } | null;
}

export interface RequestTrace {
  /**
   * A provider attempt begins: its span starts, and `request.traceHeaders` is set to the context
   * the provider receives (traceparent, tracestate).
   */
  attempt(adapter: ProviderAdapter, request: ChatRequest | EmbeddingsRequest): void;
  /** The attempt failed (the route may go on to the next provider: the next attempt says so). */
  attemptFailed(err: unknown): void;
  /** The attempt's provider accepted the request; a stream's events may be wrapped to watch them. */
  answered(result: CompletionResult | StreamResult | EmbeddingsResult): void;
  /** The request finished, on whichever way out (GatewayCall.finish). */
  end(outcome: AuditOutcome, status: number, errorCode: string | null, usage: UsageOutcome | undefined): void;
}

/** What an MCP tool call's span starts from (read from the request before its body arrived). */
export interface ToolSpanStart {
  traceparent: string;
  tracestate: string;
  route: string;
  requestId: string;
  projectId: string;
  keyId: string;
  server: string;
  tool: string;
  /** The JSON-RPC request id, as text. */
  callId: string;
}

export interface ToolTrace {
  /** The context the MCP server receives (its traceparent), so its own spans join the trace. */
  readonly traceparent: string | undefined;
  end(outcome: AuditOutcome, status: number, errorCode: string | null): void;
}
