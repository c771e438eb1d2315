import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { GatewayError, type AuditOutcome } from '@gateway/shared';
import type { UsageOutcome } from '../pipeline/request-records.js';
import type { HttpRequest } from '../http/uws.js';
import type { ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, ProviderAdapter, StreamResult } from '../providers/adapter.js';
import { chunkText, completionText, inputMessages, outputMessages } from './content-capture.js';
import { ATTR, CONTENT_EVENT, genAiProviderName, OPERATION, TAG_ATTRIBUTE_PREFIX } from './genai.js';
import type { GatewayTracer, RequestTrace, ToolSpanStart, ToolTrace, TracedCall } from './request-trace.js';
import { OtelToolTrace } from './tool-trace.js';
import { completionFacts, responseFacts } from './response-facts.js';

/** Where a provider is reached (server.address / server.port of its attempts). */
export interface ProviderServer {
  address: string;
  port: number;
}

interface Attempt {
  span: Span;
  providerType: string;
  state: 'pending' | 'failed' | 'answered';
}

const propagator = new W3CTraceContextPropagator();

/**
 * gateway.attempt.outcome: served (this provider answered), failover (it failed and the next was
 * tried), failed (it failed and no other was), abandoned (the request ended while it was asked:
 * client gone, key revoked).
 */
type AttemptOutcome = 'served' | 'failover' | 'failed' | 'abandoned';
const ATTEMPT_OUTCOME: Record<Attempt['state'], AttemptOutcome> = { answered: 'served', failed: 'failed', pending: 'abandoned' };

/**
 * A SERVER span per gateway request, and a CLIENT span per provider attempt, under the GenAI
 * semantic conventions. Context is passed explicitly (no context manager, no async hooks): the
 * request's span is the parent of its attempts, and an attempt's context is what the provider
 * receives as traceparent.
 */
export class OtelGatewayTracer implements GatewayTracer {
  constructor(
    readonly tracer: Tracer,
    readonly servers: ReadonlyMap<string, ProviderServer>,
    readonly captureContent: boolean,
    private readonly shutdown: () => Promise<void>,
  ) {}

  start(call: TracedCall, req: HttpRequest, method: string, route: string): RequestTrace {
    const traceparent = req.getHeader('traceparent');
    const parent = traceparent === '' ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, { traceparent, tracestate: req.getHeader('tracestate') }, defaultTextMapGetter);
    // A model request is named for its operation (and, once read, its model); any other for its route.
    const operation = call.endpoint === null ? null : OPERATION[call.endpoint];
    const span = this.tracer.startSpan(
      operation ?? `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.httpRoute]: route, [ATTR.requestId]: call.info.requestId } },
      parent,
    );
    return new OtelRequestTrace(this, call, operation ?? 'chat', span);
  }

  tool(start: ToolSpanStart): ToolTrace {
    return new OtelToolTrace(this.tracer, start);
  }

  close(): Promise<void> {
    return this.shutdown();
  }
}

class OtelRequestTrace implements RequestTrace {
  private readonly context: Context;
  private current: Attempt | null = null;
  private attempts = 0;
  private input: unknown = null;
  private responseId: string | null = null;
  private responseModel: string | null = null;
  /** The answer's text, gathered only when content is captured. */
  private text = '';

  constructor(
    private readonly owner: OtelGatewayTracer,
    private readonly call: TracedCall,
    /** gen_ai.operation.name of the request's provider calls. */
    private readonly operation: string,
    private readonly span: Span,
  ) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  attempt(adapter: ProviderAdapter, request: ChatRequest | EmbeddingsRequest): void {
    if (!this.span.isRecording()) {
      // Not sampled: no attempt spans, but the provider still learns the trace (flag unsampled).
      request.traceHeaders = inject(this.context);
      return;
    }
    if (this.current !== null) this.closeAttempt('failover');
    if (this.attempts === 0 && 'stream' in request) this.requestFacts(request);
    this.attempts++;
    const server = this.owner.servers.get(adapter.name);
    const attributes: Attributes = {
      [ATTR.operationName]: this.operation,
      [ATTR.providerName]: genAiProviderName(adapter.type),
      [ATTR.gatewayProvider]: adapter.name,
      [ATTR.requestModel]: request.upstreamModel,
      [ATTR.attemptNumber]: this.attempts,
    };
    if (server !== undefined) {
      attributes[ATTR.serverAddress] = server.address;
      attributes[ATTR.serverPort] = server.port;
    }
    const span = this.owner.tracer.startSpan(`${this.operation} ${request.upstreamModel}`, { kind: SpanKind.CLIENT, attributes }, this.context);
    this.current = { span, providerType: adapter.type, state: 'pending' };
    request.traceHeaders = inject(trace.setSpan(ROOT_CONTEXT, span));
  }

  attemptFailed(err: unknown): void {
    const attempt = this.current;
    if (attempt === null) return;
    attempt.state = 'failed';
    const type = errorType(err);
    attempt.span.setAttribute(ATTR.errorType, type);
    attempt.span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  }

  answered(result: CompletionResult | StreamResult | EmbeddingsResult): void {
    if (!this.span.isRecording() || this.current === null) return;
    this.current.state = 'answered';
    if (!('status' in result) && !('events' in result)) return;
    if ('body' in result) {
      const facts = completionFacts(result.body);
      this.responseId = facts.id;
      this.responseModel = facts.model;
      if (this.owner.captureContent) this.text = completionText(result.body);
      return;
    }
    result.events = this.watch(result.events);
  }

  /** The stream as it was, its first chunk read for the response's id and model (and every chunk's text when captured). */
  private async *watch(events: AsyncIterable<string>): AsyncGenerator<string> {
    let first = true;
    const capture = this.owner.captureContent;
    for await (const data of events) {
      if (first) {
        first = false;
        const facts = responseFacts(data);
        this.responseId = facts.id;
        this.responseModel = facts.model;
      }
      if (capture) this.text += chunkText(data);
      yield data;
    }
  }

  end(outcome: AuditOutcome, status: number, errorCode: string | null, usage: UsageOutcome | undefined): void {
    const { span, call } = this;
    if (!span.isRecording()) {
      span.end();
      return;
    }
    const attributes: Attributes = {
      [ATTR.httpStatus]: status,
      [ATTR.outcome]: outcome,
      [ATTR.attempts]: this.attempts,
    };
    if (call.projectId !== '') attributes[ATTR.projectId] = call.projectId;
    if (call.keyId !== '') attributes[ATTR.keyId] = call.keyId;
    if (errorCode !== null) attributes[ATTR.errorType] = errorCode;
    if (call.endpoint !== null) {
      attributes[ATTR.endpoint] = call.endpoint;
      attributes[ATTR.operationName] = this.operation;
      if (call.model !== null) span.updateName(`${this.operation} ${call.model}`);
    }
    if (call.model !== null) attributes[ATTR.requestModel] = call.model;
    if (call.provider !== null) attributes[ATTR.gatewayProvider] = call.provider;
    const extras = call.extras;
    if (extras !== null) {
      if (extras.endUser !== null) attributes[ATTR.endUser] = extras.endUser;
      if (extras.tags !== null) for (const key of Object.keys(extras.tags)) attributes[TAG_ATTRIBUTE_PREFIX + key] = extras.tags[key];
    }
    if (this.current !== null) attributes[ATTR.providerName] = genAiProviderName(this.current.providerType);
    const answered = this.current?.state === 'answered';
    if (answered) {
      if (this.responseModel !== null) attributes[ATTR.responseModel] = this.responseModel;
      if (this.responseId !== null) attributes[ATTR.responseId] = this.responseId;
    }
    if (usage !== undefined) {
      attributes[ATTR.inputTokens] = usage.input;
      attributes[ATTR.outputTokens] = usage.output;
      if (usage.cached > 0) attributes[ATTR.cacheReadTokens] = usage.cached;
      if (usage.cacheWrite > 0) attributes[ATTR.cacheCreationTokens] = usage.cacheWrite;
      attributes[ATTR.finishReasons] = [usage.rawFinishReason ?? usage.finishReason];
    }
    span.setAttributes(attributes);
    if (this.owner.captureContent && this.input !== null) this.recordContent(answered ? (usage?.rawFinishReason ?? usage?.finishReason ?? null) : null, answered);
    if (this.current !== null) this.closeAttempt(ATTEMPT_OUTCOME[this.current.state], errorCode, usage);
    // HTTP server spans are errors for 5xx only: a 4xx is the client's doing, not the gateway's.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode ?? String(status) });
    span.end();
  }

  /** The request's own settings, on the request span, from the first attempt's body. */
  private requestFacts(request: ChatRequest): void {
    const body = request.body;
    const attributes: Attributes = { [ATTR.requestStream]: request.stream };
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (typeof maxTokens === 'number') attributes[ATTR.requestMaxTokens] = maxTokens;
    if (typeof body.temperature === 'number') attributes[ATTR.requestTemperature] = body.temperature;
    if (typeof body.top_p === 'number') attributes[ATTR.requestTopP] = body.top_p;
    this.span.setAttributes(attributes);
    if (this.owner.captureContent) this.input = body.messages ?? null;
  }

  private recordContent(finishReason: string | null, answered: boolean): void {
    const event: Attributes = { [ATTR.inputMessages]: JSON.stringify(inputMessages(this.input)) };
    if (answered) event[ATTR.outputMessages] = JSON.stringify(outputMessages(this.text, finishReason));
    this.span.addEvent(CONTENT_EVENT, event);
  }

  private closeAttempt(result: AttemptOutcome, errorCode: string | null = null, usage?: UsageOutcome): void {
    const attempt = this.current as Attempt;
    this.current = null;
    const span = attempt.span;
    span.setAttribute(ATTR.attemptOutcome, result);
    if (result === 'served') {
      if (this.responseModel !== null) span.setAttribute(ATTR.responseModel, this.responseModel);
      if (this.responseId !== null) span.setAttribute(ATTR.responseId, this.responseId);
      if (usage !== undefined) {
        span.setAttributes({ [ATTR.inputTokens]: usage.input, [ATTR.outputTokens]: usage.output, [ATTR.finishReasons]: [usage.rawFinishReason ?? usage.finishReason] });
      }
      // A stream that broke after the provider accepted it failed all the same.
      if (errorCode !== null) {
        span.setAttribute(ATTR.errorType, errorCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
      }
    }
    span.end();
  }
}

function inject(context: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  propagator.inject(context, headers, defaultTextMapSetter);
  return headers;
}

/** error.type of a failed attempt: the gateway's error code, else the error's class. */
function errorType(err: unknown): string {
  if (err instanceof GatewayError) return err.code;
  return err instanceof Error ? err.name : 'unknown';
}
