import { Errors, type GatewayError } from '@gateway/shared';
import { providerErrorDetail, retryAfterSeconds, withProviderText } from '../upstream-error.js';

/**
 * Bedrock's errors as the gateway's. An HTTP error names its class in the `x-amzn-ErrorType`
 * header (`ThrottlingException:http://internal.amazon.com/…`) with `{"message": …}` as its body; a
 * stream's error is an exception message whose `:exception-type` is the same class, lower camel
 * case (`throttlingException`). The class decides, whatever the status says.
 */
interface Mapped {
  code: 'INVALID_REQUEST' | 'RATE_LIMITED' | 'UNAVAILABLE' | 'UPSTREAM_ERROR' | 'UPSTREAM_TIMEOUT' | 'PAYLOAD_TOO_LARGE';
  retryable: boolean;
  what: string;
}

const CLASSES: Readonly<Record<string, Mapped>> = {
  throttlingexception: { code: 'RATE_LIMITED', retryable: true, what: 'is rate-limiting requests' },
  modelnotreadyexception: { code: 'RATE_LIMITED', retryable: true, what: 'has the model not ready' },
  servicequotaexceededexception: { code: 'RATE_LIMITED', retryable: true, what: 'refused the request over a service quota' },
  validationexception: { code: 'INVALID_REQUEST', retryable: false, what: 'refused the request' },
  serviceunavailableexception: { code: 'UNAVAILABLE', retryable: true, what: 'is unavailable' },
  internalserverexception: { code: 'UPSTREAM_ERROR', retryable: true, what: 'failed' },
  modelstreamerrorexception: { code: 'UPSTREAM_ERROR', retryable: true, what: 'failed while streaming' },
  modelerrorexception: { code: 'UPSTREAM_ERROR', retryable: true, what: 'failed' },
  modeltimeoutexception: { code: 'UPSTREAM_TIMEOUT', retryable: true, what: 'timed out' },
  // The gateway's own misconfiguration (keys, region, model access), not the client's mistake.
  accessdeniedexception: { code: 'UPSTREAM_ERROR', retryable: false, what: 'refused the gateway\'s credentials or model access' },
  unrecognizedclientexception: { code: 'UPSTREAM_ERROR', retryable: false, what: 'refused the gateway\'s credentials' },
  invalidsignatureexception: { code: 'UPSTREAM_ERROR', retryable: false, what: 'refused the gateway\'s request signature' },
  resourcenotfoundexception: { code: 'UPSTREAM_ERROR', retryable: false, what: 'does not know the model' },
};

const BY_STATUS: Readonly<Record<number, string>> = { 400: 'validationexception', 403: 'accessdeniedexception', 404: 'resourcenotfoundexception', 408: 'modeltimeoutexception', 424: 'modelerrorexception', 429: 'throttlingexception', 500: 'internalserverexception', 503: 'serviceunavailableexception' };

function classOf(errorType: string | undefined): string {
  return (errorType ?? '').split(':')[0]!.trim().toLowerCase();
}

function build(provider: string, mapped: Mapped, message: string, retryAfter: number | undefined): GatewayError {
  const detail = message === '' ? '' : `: ${message}`;
  const text = `Provider ${provider} ${mapped.what}${detail}`;
  if (mapped.code === 'RATE_LIMITED' || mapped.code === 'UNAVAILABLE') return Errors.fromProvider(mapped.code, text, { retryAfter: retryAfter ?? 1, retryable: mapped.retryable });
  return Errors.fromProvider(mapped.code, text, { retryable: mapped.retryable });
}

/** A non-200 answer. */
export function bedrockStatusError(provider: string, status: number, bodyText: string, errorType: string | undefined, retryAfter: string | undefined): GatewayError {
  const mapped = CLASSES[classOf(errorType)] ?? CLASSES[BY_STATUS[status] ?? ''];
  const said = providerErrorDetail(bodyText);
  const { message } = said;
  if (status === 413) return withProviderText(Errors.providerTooLarge(provider, message ? `: ${message}` : ''), said);
  if (mapped === undefined) return withProviderText(Errors.providerAnswered(provider, status, message ? `: ${message}` : '', status >= 500), said);
  return withProviderText(build(provider, mapped, message, retryAfterSeconds(retryAfter)), said);
}

/**
 * An exception message inside a stream. Before any chunk, it fails the request as its class would
 * as a status (a throttled stream fails over); after, the stream fails with UPSTREAM_ERROR.
 */
export function bedrockExceptionError(provider: string, exceptionType: string, payload: string, started: boolean): GatewayError {
  const said = providerErrorDetail(payload);
  const { message } = said;
  const mapped = CLASSES[exceptionType.toLowerCase()] ?? CLASSES.internalserverexception!;
  if (!started) return withProviderText(build(provider, mapped, message, undefined), said);
  return withProviderText(Errors.providerStreamException(provider, exceptionType, message), said);
}
