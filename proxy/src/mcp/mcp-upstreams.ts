import { Pool, type Dispatcher } from 'undici';
import type { McpServerConfig } from '@gateway/shared';

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
  signal?: AbortSignal;
}

export class McpUpstream {
  readonly name: string;
  readonly pricePerCall: number | null;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(config: McpServerConfig) {
    const url = new URL(config.url);
    this.name = config.name;
    this.pricePerCall = config.price_per_call;
    this.path = url.pathname + url.search;
    this.headers = config.headers;
    this.timeoutMs = config.timeout_ms;
    this.pool = new Pool(url.origin, { connections: 128, connect: { timeout: config.connect_timeout_ms }, pipelining: 1 });
  }

  /**
   * One HTTP request to the server. Streams may stay silent for as long as a tool runs or the
   * server has nothing to say, so only the wait for response headers is bounded.
   */
  send(req: UpstreamRequest): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { ...this.headers, accept: req.accept };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    if (req.sessionId !== '') headers['mcp-session-id'] = req.sessionId;
    if (req.protocolVersion !== '') headers['mcp-protocol-version'] = req.protocolVersion;
    if (req.lastEventId !== undefined && req.lastEventId !== '') headers['last-event-id'] = req.lastEventId;
    if (req.traceparent !== undefined) headers.traceparent = req.traceparent;
    return this.pool.request({
      path: this.path,
      method: req.method,
      headers,
      body: req.body ?? null,
      signal: req.signal,
      headersTimeout: this.timeoutMs,
      bodyTimeout: 0,
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export class McpUpstreams {
  private readonly byName = new Map<string, McpUpstream>();

  constructor(configs: readonly McpServerConfig[]) {
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
export function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string {
  const value = headers[name];
  if (value === undefined) return '';
  return Array.isArray(value) ? (value[0] ?? '') : value;
}
