import autocannon, { type RawRequest, type Result } from 'autocannon';

/**
 * Saturation load with autocannon: no pipelining (clients of a chat API send one request at a
 * time per connection), JSON body, key in x-api-key.
 */
export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  headers: Record<string, string>;
  body: string;
  /** Requests per second over all connections; 0 or absent: as fast as the target answers. */
  rate?: number;
  /** Rewrites each request before it is sent (for example a fresh key per request). */
  perRequest?: (request: RawRequest) => RawRequest;
}

export interface LoadResult {
  /** Completed responses per second over the whole window. */
  rps: number;
  completed: number;
  sent: number;
  durationS: number;
  /** Milliseconds, as autocannon records them. */
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  statusCodes: Record<string, number>;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        method: 'POST',
        connections: spec.connections,
        pipelining: 1,
        duration: spec.durationS,
        headers: spec.headers,
        body: spec.body,
        ...(spec.rate ? { overallRate: spec.rate } : {}),
        ...(spec.perRequest ? { requests: [{ setupRequest: spec.perRequest }] } : {}),
      },
      (err, result) => (err ? reject(err) : resolve(summariseLoad(result))),
    );
  });
}

function summariseLoad(result: Result): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count);
  const completed = result.requests.total;
  return {
    rps: result.duration > 0 ? completed / result.duration : 0,
    completed,
    sent: result.requests.sent ?? completed,
    durationS: result.duration,
    latencyMs: { mean: result.latency.mean, p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    statusCodes,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
