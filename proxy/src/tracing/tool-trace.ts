import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { AuditOutcome } from '@gateway/shared';
import { ATTR } from './genai.js';
import type { ToolSpanStart, ToolTrace } from './request-trace.js';

const propagator = new W3CTraceContextPropagator();

/**
 * One MCP tools/call through the gateway: an `execute_tool {tool}` span (GenAI semantic
 * conventions) under the caller's trace, whose context the MCP server receives as traceparent.
 */
export class OtelToolTrace implements ToolTrace {
  readonly traceparent: string | undefined;
  private readonly span: Span;

  constructor(tracer: Tracer, start: ToolSpanStart) {
    const parent = start.traceparent === '' ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, { traceparent: start.traceparent, tracestate: start.tracestate }, defaultTextMapGetter);
    this.span = tracer.startSpan(
      `execute_tool ${start.tool}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR.operationName]: 'execute_tool',
          [ATTR.toolName]: start.tool,
          [ATTR.toolCallId]: start.callId,
          [ATTR.toolType]: 'extension',
          [ATTR.mcpServer]: start.server,
          [ATTR.httpMethod]: 'POST',
          [ATTR.httpRoute]: start.route,
          [ATTR.requestId]: start.requestId,
          [ATTR.endpoint]: 'mcp',
          [ATTR.projectId]: start.projectId,
          [ATTR.keyId]: start.keyId,
        },
      },
      parent,
    );
    const headers: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.span), headers, defaultTextMapSetter);
    this.traceparent = headers.traceparent;
  }

  end(outcome: AuditOutcome, status: number, errorCode: string | null): void {
    this.span.setAttributes({ [ATTR.httpStatus]: status, [ATTR.outcome]: outcome });
    if (errorCode !== null) {
      this.span.setAttribute(ATTR.errorType, errorCode);
      // A tool that failed failed the call; a refusal (4xx) is the client's doing.
      if (status >= 500 || outcome === 'error') this.span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
    }
    this.span.end();
  }
}
