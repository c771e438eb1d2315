import { Errors, GatewayError } from '@gateway/shared';
import { providerErrorDetail, providerStatusError, streamErrorEvent, withProviderText } from '../upstream-error.js';

/**
 * Google's error body (`{"error":{"code","message","status","details"}}`) as the gateway's error
 * of the same class, through the shared status mapping: 400 (INVALID_ARGUMENT,
 * FAILED_PRECONDITION) → INVALID_REQUEST; 401/403/404 → UPSTREAM_ERROR, not retryable (the
 * gateway's key or model name is wrong, another try will not fix it); 429 RESOURCE_EXHAUSTED →
 * RATE_LIMITED; 500/503 → UPSTREAM_ERROR and 504 → UPSTREAM_TIMEOUT, retryable. Google answers a
 * wrong or expired key with a 400 too (ErrorInfo reason API_KEY_…): that is the gateway's
 * misconfiguration, not the client's mistake, so it is UPSTREAM_ERROR, not INVALID_REQUEST.
 *
 * Google rarely sends Retry-After on a 429; it says how long to wait in a `RetryInfo` detail
 * (`"retryDelay": "37s"`), used when the header is absent. Google API keys (`AIza…`, 39
 * characters) are shorter than the shared scrubber's generic token shape, so they and the
 * provider's own key are removed here before the message goes anywhere.
 */
const GOOGLE_KEY = /AIza[0-9A-Za-z_-]{35}/g;

export function scrubGoogle(text: string, secret: string | null): string {
  let out = text.replace(GOOGLE_KEY, '[REDACTED]');
  if (secret !== null && secret.length >= 8) out = out.split(secret).join('[REDACTED]');
  return out;
}

function details(bodyText: string): Record<string, unknown>[] {
  try {
    const found = (JSON.parse(bodyText) as { error?: { details?: unknown } }).error?.details;
    return Array.isArray(found) ? (found as unknown[]).filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null) : [];
  } catch {
    return [];
  }
}

function detailOfType(bodyText: string, type: string): Record<string, unknown>[] {
  return details(bodyText).filter((d) => typeof d['@type'] === 'string' && d['@type'].endsWith(type));
}

/** Seconds from the first RetryInfo detail of a Google error body, rounded up. */
export function retryDelaySeconds(bodyText: string): number | undefined {
  for (const detail of detailOfType(bodyText, 'google.rpc.RetryInfo')) {
    const delay = detail.retryDelay;
    const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
    if (match !== null) return Math.min(Math.ceil(Number(match[1])), 86_400);
  }
  return undefined;
}

export function geminiStatusError(provider: string, status: number, bodyText: string, retryAfter: string | undefined, secret: string | null): GatewayError {
  const text = scrubGoogle(bodyText, secret);
  if (status === 400 && detailOfType(text, 'google.rpc.ErrorInfo').some((d) => typeof d.reason === 'string' && d.reason.startsWith('API_KEY_'))) {
    const said = providerErrorDetail(text);
    return withProviderText(Errors.providerKeyRefused(provider, `refused the gateway's API key: ${said.message}`), said);
  }
  let wait = retryAfter;
  if (status === 429 && (wait === undefined || wait.trim() === '')) {
    const seconds = retryDelaySeconds(text);
    if (seconds !== undefined) wait = String(seconds);
  }
  return providerStatusError(provider, status, text, wait);
}

export function geminiStreamError(provider: string, data: string, secret: string | null): GatewayError {
  return streamErrorEvent(provider, scrubGoogle(data, secret));
}
