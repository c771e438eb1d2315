import { Errors, GatewayError } from '@gateway/shared';
import { scrubCloudIdentifiers } from './error-scrub.js';
import { UpstreamAborted, type UpstreamResponse } from './upstream-request.js';

/**
 * Turning provider failures into the gateway's codes, keeping their class: a provider's 400 is the
 * client's mistake (INVALID_REQUEST, with the provider's `param`), its 429 a rate limit the client
 * should back off from (RATE_LIMITED, with its Retry-After), its 5xx a provider fault (502), its
 * timeouts 504. A provider's own error message is kept (it is usually the most useful thing a
 * client can see) once it has been shortened and stripped of anything shaped like a credential
 * and of the operator's cloud identifiers (error-scrub.ts). The provider's words without the
 * credentials stay with the error, out of its message, for the proxy's log line of the request.
 */
const CREDENTIAL_SHAPES = /\b(?:sk|gw|pk|rk)[-_][A-Za-z0-9_-]{6,}|\bBearer\s+\S+|\b[A-Za-z0-9_-]{40,}\b/g;
const MAX_MESSAGE = 300;
/** An error body is read up to 8 KiB (readLimited); its message is logged up to this much. */
const MAX_LOGGED = 2000;

export interface ProviderErrorDetail {
  /** What a client may read. */
  message: string;
  param: string | null;
  /** The provider's message without credentials, for the operator's log; never for a client. */
  logged: string;
}

function withoutCredentials(text: string, max: number): string {
  const message = text.replace(CREDENTIAL_SHAPES, '[REDACTED]').replace(/\s+/g, ' ').trim();
  return message.length > max ? `${message.slice(0, max)}…` : message;
}

function scrub(text: string): string {
  // Identifiers first: one cut at the length limit would leave a part no rule recognises.
  return withoutCredentials(scrubCloudIdentifiers(text), MAX_MESSAGE);
}

/** The message (scrubbed) and `param` of a provider's error body, JSON or not. */
export function providerErrorDetail(text: string): ProviderErrorDetail {
  let message = text;
  let param: string | null = null;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; param?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') message = parsed.error;
    else if (typeof parsed.error?.message === 'string') message = parsed.error.message;
    else if (typeof parsed.message === 'string') message = parsed.message;
    if (typeof parsed.error === 'object' && typeof parsed.error?.param === 'string') param = scrub(parsed.error.param).slice(0, 100);
  } catch {
    // Not JSON: keep the text itself.
  }
  return { ...providerTextDetail(message), param };
}

/** A provider's message that is not an error body (a library's words about its answer), scrubbed alike. */
export function providerTextDetail(text: string): ProviderErrorDetail {
  return { message: scrub(text), param: null, logged: withoutCredentials(text, MAX_LOGGED) };
}

export function safeProviderMessage(text: string): string {
  return providerErrorDetail(text).message;
}

/**
 * The provider's own words behind an error, kept beside it (not on it: nothing that serialises
 * or logs the error object carries them along) for the log line of the request it fails.
 */
const PROVIDER_TEXT = new WeakMap<GatewayError, string>();

/** `err`, with the provider's words of `detail` kept for the log. */
export function withProviderText<E extends GatewayError>(err: E, detail: ProviderErrorDetail): E {
  if (detail.logged !== '') PROVIDER_TEXT.set(err, detail.logged);
  return err;
}

/** What the provider said, credentials removed, when the error came from a provider's answer. */
export function providerTextOf(err: GatewayError): string | null {
  return PROVIDER_TEXT.get(err) ?? null;
}

/** Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), if it has a usable one. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), 86_400);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), 86_400);
}

/** Statuses on which another provider is tried (DESIGN §2): overloaded, rate-limited, failing. */
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504, 529]);

/** A provider's non-200 answer as the gateway error of the same class. */
export function providerStatusError(provider: string, status: number, bodyText: string, retryAfter?: string | string[]): GatewayError {
  const said = providerErrorDetail(bodyText);
  return withProviderText(statusError(provider, status, said, retryAfter), said);
}

function statusError(provider: string, status: number, { message, param }: ProviderErrorDetail, retryAfter?: string | string[]): GatewayError {
  const detail = message ? `: ${message}` : '';
  const retryable = RETRYABLE_STATUS.has(status);
  if (status === 400 || status === 422) {
    return Errors.providerRefused(provider, detail, param);
  }
  if (status === 413) return Errors.providerTooLarge(provider, detail);
  if (status === 429) {
    return Errors.providerRateLimited(provider, detail, retryAfterSeconds(retryAfter) ?? 1, retryable);
  }
  return Errors.providerStatus(provider, status, detail, retryable);
}

/** An error event inside a provider's stream, as the gateway error it stands for. */
export function streamErrorEvent(provider: string, data: string): GatewayError {
  const said = providerErrorDetail(data);
  return withProviderText(Errors.providerFailedMidStream(provider, said.message), said);
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
/** Failures before the provider said anything: another provider may well answer. */
const RETRYABLE_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET', 'EPIPE']);

/** Any failure of the transport as a GatewayError; a cancelled call's error passes through for the caller. */
export function transportError(provider: string, err: unknown, aborted: boolean): unknown {
  if (err instanceof GatewayError) return err;
  if (aborted || err instanceof UpstreamAborted) return err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) {
    const what = code === 'UND_ERR_BODY_TIMEOUT' ? 'stopped sending' : code === 'UND_ERR_HEADERS_TIMEOUT' ? 'did not answer in time' : 'could not be reached in time';
    return Errors.providerTimeout(provider, what, err, RETRYABLE_CODES.has(code));
  }
  return Errors.providerUnreachable(provider, code, err, RETRYABLE_CODES.has(code));
}

/** Any failure of the transport as a GatewayError, a cancelled call's included (for callers that answer it rather than pass it up). */
export function transportFailure(provider: string, err: unknown, aborted: boolean): GatewayError {
  const mapped = transportError(provider, err, aborted);
  return mapped instanceof GatewayError ? mapped : Errors.providerUnreachable(provider, 'aborted', mapped, false);
}

/** At most `limit` bytes of an error body (a provider may send a whole HTML page); the rest is not read. */
export async function readLimited(res: Pick<UpstreamResponse, 'body' | 'destroy'>, limit = 8192): Promise<string> {
  try {
    return (await res.body(limit)).toString('utf8');
  } catch {
    return '';
  } finally {
    res.destroy();
  }
}
