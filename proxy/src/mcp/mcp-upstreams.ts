import type { McpServerConfig } from '@gateway/shared';
import type { Cancel } from '../providers/cancel.js';
import { ClientStack } from '../providers/client-stack.js';
import { UpstreamResponse } from '../providers/upstream-request.js';
import type { SessionSigner } from './session-signer.js';

/**
 * The MCP servers of the providers file, each with its keep-alive connection pool, built at start.
 * The headers sent to a server are its configured ones: the client's own headers (its gateway key
 * above all) never reach it.
 */
export interface UpstreamRequest {
  method: 'POST' | 'GET' | 'DELETE';
  sessionId: string;
  protocolVersion: string;
  accept: string;
  lastEventId?: string;
  traceparent?: string;
  body?: Buffer | string;
  cancel: Cancel;
}

/** A server's answer as the relay reads it, whichever way it was fetched. */
export interface UpstreamAnswer {
  readonly status: number;
  header(name: string): string | undefined;
  body(): Promise<Buffer>;
  stream(): AsyncIterable<Buffer>;
  destroy(): void;
}

export class McpUpstream {
  readonly name: string;
  readonly pricePerCall: number | null;
  private readonly pool: ClientStack;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(config: McpServerConfig) {
    const url = new URL(config.url);
    this.name = config.name;
    this.pricePerCall = config.price_per_call;
    this.path = url.pathname + url.search;
    this.headers = config.headers;
    // One keep-alive connection per exchange in flight and a stack of idle ones, as for providers:
    // no cap, since every open server-initiated stream (GET) holds a connection for its life.
    this.pool = new ClientStack(url.origin, { connect: { timeout: config.connect_timeout_ms }, headersTimeout: config.timeout_ms, bodyTimeout: 0, keepAliveTimeout: 30_000 });
  }

  /**
   * One HTTP request to the server, through undici's dispatch() with the providers' own handler
   * (no Readable, AbortSignal or promise per chunk; a stream read with backpressure). Streams may
   * stay silent for as long as a tool runs or the server has nothing to say, so only the wait for
   * response headers is bounded.
   */
  send(req: UpstreamRequest): Promise<UpstreamAnswer> {
    // A copy, then the additions: V8 makes properties added after an object spread slow.
    const headers: Record<string, string> = Object.assign({}, this.headers);
    headers.accept = req.accept;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    if (req.sessionId !== '') headers['mcp-session-id'] = req.sessionId;
    if (req.protocolVersion !== '') headers['mcp-protocol-version'] = req.protocolVersion;
    if (req.lastEventId !== undefined && req.lastEventId !== '') headers['last-event-id'] = req.lastEventId;
    if (req.traceparent !== undefined) headers.traceparent = req.traceparent;
    const body = req.body === undefined ? null : typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
    return UpstreamResponse.send(this.pool, req.method, this.path, headers, body, req.cancel);
  }

  /** At drain: what is still open is only server-initiated streams, cut as the process ends. */
  close(): Promise<void> {
    return this.pool.destroy();
  }
}

export class McpUpstreams {
  private readonly byName = new Map<string, McpUpstream>();

  /** `sessions` signs and verifies the aggregate endpoint's session ids (session-signer.ts). */
  constructor(
    configs: readonly McpServerConfig[],
    readonly sessions: SessionSigner,
  ) {
    for (const config of configs) this.byName.set(config.name, new McpUpstream(config));
  }

  get(name: string): McpUpstream | undefined {
    return this.byName.get(name);
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get size(): number {
    return this.byName.size;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.byName.values()].map((u) => u.close()));
  }
}

/** A response header as one string ('' when absent). */
export function headerOf(answer: UpstreamAnswer, name: string): string {
  return answer.header(name) ?? '';
}
