/** An adapter's headers, plus the request's trace context when it is traced (a copy then; the adapter's own otherwise). */
export function withTraceHeaders(headers: Record<string, string>, request: { traceHeaders?: Record<string, string> } | null): Record<string, string> {
  return request === null || request.traceHeaders === undefined ? headers : Object.assign({}, headers, request.traceHeaders);
}
