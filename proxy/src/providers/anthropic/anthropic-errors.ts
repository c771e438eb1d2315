import { Errors, GatewayError } from '@gateway/shared';
import { statusOfAnthropicError } from '../../conversion/anthropic-openai.js';
import { providerErrorDetail, providerStatusError, streamErrorEvent, withProviderText } from '../upstream-error.js';

/**
 * Anthropic's failures as the gateway's codes. Its error body is
 * `{"type":"error","error":{"type","message"}}`; the shared mapping reads its message and keeps
 * each status's class (400 → INVALID_REQUEST, 429 → RATE_LIMITED, 500/529 retryable, …). A 401
 * or 403 is the gateway's own misconfiguration (a wrong or under-privileged provider key), not
 * the client's: it is a 502 that says so, never the client's 401.
 */
export function anthropicStatusError(provider: string, status: number, bodyText: string, retryAfter?: string): GatewayError {
  if (status === 401 || status === 403) {
    const said = providerErrorDetail(bodyText);
    const what = status === 401 ? 'refused the gateway\'s API key' : 'does not allow the gateway\'s API key this request';
    return withProviderText(Errors.providerKeyRefused(provider, `${what} (${status}${said.message ? `: ${said.message}` : ''}); check its api_key in the providers file.`), said);
  }
  return providerStatusError(provider, status, bodyText, retryAfter);
}

/**
 * An `error` event in a stream. Before the stream reached the client it is what the same error
 * as a status would be (an `overloaded_error` is a 529, retryable: another provider may answer);
 * once chunks were sent the answer is simply broken, an UPSTREAM_ERROR.
 */
export function anthropicStreamError(provider: string, data: string, started: boolean): GatewayError {
  if (started) return streamErrorEvent(provider, data);
  let type: unknown;
  try {
    type = (JSON.parse(data) as { error?: { type?: unknown } }).error?.type;
  } catch {
    type = undefined;
  }
  const status = statusOfAnthropicError(type);
  return status === undefined ? streamErrorEvent(provider, data) : anthropicStatusError(provider, status, data);
}
