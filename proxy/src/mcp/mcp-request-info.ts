import type { RequestInfo } from '../pipeline/context.js';

/**
 * What an MCP request's line and headers say, read inside the uWebSockets.js callback (the
 * request object dies when it returns). The client's key is here to be checked, never forwarded.
 */
export interface McpRequestInfo extends RequestInfo {
  /** The server named in the path; null on the aggregate endpoint `/mcp`. */
  server: string | null;
  sessionId: string;
  protocolVersion: string;
  accept: string;
  lastEventId: string;
  /** The caller's W3C trace context, continued by the tool call's span. */
  traceparent: string;
  tracestate: string;
}
