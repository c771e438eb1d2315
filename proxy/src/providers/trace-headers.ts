import type { ChatRequest } from './adapter.js';

/** An adapter's headers, plus the request's trace context when it is traced (a copy then; the adapter's own otherwise). */
export function withTraceHeaders(headers: Record<string, string>, request: ChatRequest): Record<string, string> {
  return request.traceHeaders === undefined ? headers : { ...headers, ...request.traceHeaders };
}
