import { Errors, type CorsConfig, type GatewayError } from '@gateway/shared';
import type { HttpRequest, HttpResponse } from './uws.js';

/** Response headers a request's origin earns: written by Exchange with every answer. */
export type CorsHeaders = readonly (readonly [string, string])[];

/**
 * Request headers the official SDKs send from a browser (openai, @anthropic-ai/sdk), plus the
 * gateway's own. `x-stainless-*` cannot be a wildcard in Access-Control-Allow-Headers, so a
 * preflight is answered with the requested headers that are in this set, and no others.
 */
const ALLOWED_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'openai-organization',
  'openai-project',
  'openai-beta',
  'idempotency-key',
  'x-request-id',
  'x-gateway-tags',
  'cache-control',
]);
const ALLOWED_PREFIX = 'x-stainless-';

/**
 * Response headers a page may read: the request id, when to retry, the rate-limit state and
 * whether the response cache answered. Access-Control-Expose-Headers takes no wildcard with
 * credentials, so the names are listed.
 */
export const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
  'x-gateway-cache',
  'x-gateway-dropped-params',
  'age',
].join(', ');

// DELETE: a page may delete a stored response (DELETE /v1/responses/{id}).
const METHODS = 'GET, POST, DELETE';
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = '600';

/**
 * CORS_ORIGINS, decided at start: the headers for each allowed origin are built once, so a
 * request pays one Map lookup of its Origin header. Without CORS_ORIGINS nothing here exists.
 */
export class Cors {
  private readonly byOrigin = new Map<string, CorsHeaders>();
  private readonly any: CorsHeaders | null;
  /** For an origin not allowed (or none): caches must still key the answer on Origin. */
  private readonly varyOnly: CorsHeaders = [['vary', 'origin']];

  constructor(config: CorsConfig) {
    const common: [string, string][] = [
      ['access-control-expose-headers', EXPOSED_HEADERS],
      ['vary', 'origin'],
    ];
    if (config.credentials) common.push(['access-control-allow-credentials', 'true']);
    if (config.origins === '*') {
      this.any = [['access-control-allow-origin', '*'], ...common];
    } else {
      this.any = null;
      for (const origin of config.origins) this.byOrigin.set(origin, [['access-control-allow-origin', origin], ...common]);
    }
  }

  /** The headers an answer to a request from `origin` carries. */
  forOrigin(origin: string): CorsHeaders {
    if (this.any !== null) return this.any;
    return this.byOrigin.get(origin) ?? this.varyOnly;
  }

  allows(origin: string): boolean {
    return origin !== '' && (this.any !== null || this.byOrigin.has(origin));
  }

  /**
   * An OPTIONS request: a browser's preflight, answered 204 without a key when the origin is
   * allowed, and 403 without CORS headers (the browser then refuses the call) when it is not.
   */
  preflight(res: HttpResponse, req: HttpRequest, errorBody: (err: GatewayError) => string): void {
    const origin = req.getHeader('origin');
    const method = req.getHeader('access-control-request-method').toUpperCase();
    if (!this.allows(origin) || (method !== '' && method !== 'GET' && method !== 'POST')) {
      const err = origin === '' ? Errors.optionsWithoutOrigin() : Errors.originNotAllowed(origin);
      res.writeStatus('403 Forbidden').writeHeader('vary', 'origin').writeHeader('content-type', 'application/json').end(errorBody(err));
      return;
    }
    const requested = allowedRequestHeaders(req.getHeader('access-control-request-headers'));
    res.writeStatus('204 No Content');
    for (const [name, value] of this.forOrigin(origin)) res.writeHeader(name, value);
    res.writeHeader('vary', 'access-control-request-headers').writeHeader('access-control-allow-methods', METHODS).writeHeader('access-control-max-age', MAX_AGE_SECONDS);
    if (requested !== '') res.writeHeader('access-control-allow-headers', requested);
    res.endWithoutBody();
  }
}

/** The requested header names that are allowed, as a list to echo. */
export function allowedRequestHeaders(requested: string): string {
  if (requested === '') return '';
  const allowed: string[] = [];
  for (const part of requested.split(',')) {
    const name = part.trim().toLowerCase();
    if (ALLOWED_HEADERS.has(name) || (name.startsWith(ALLOWED_PREFIX) && /^[a-z0-9-]+$/.test(name))) allowed.push(name);
  }
  return allowed.join(', ');
}
