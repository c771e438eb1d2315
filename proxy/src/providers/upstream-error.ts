import { GatewayError } from '@gateway/shared';

/**
 * Turning provider failures into the gateway's two upstream codes. A provider's own error message
 * is kept (it is usually the most useful thing a client can see) once it has been shortened and
 * stripped of anything shaped like a credential.
 */
const CREDENTIAL_SHAPES = /\b(?:sk|gw|pk|rk)[-_][A-Za-z0-9_-]{6,}|\bBearer\s+\S+|\b[A-Za-z0-9_-]{40,}\b/g;
const MAX_MESSAGE = 300;

export function safeProviderMessage(text: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') message = parsed.error;
    else if (typeof parsed.error?.message === 'string') message = parsed.error.message;
    else if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // Not JSON: keep the text itself.
  }
  message = message.replace(CREDENTIAL_SHAPES, '[REDACTED]').replace(/\s+/g, ' ').trim();
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}

export function providerStatusError(provider: string, status: number, bodyText: string): GatewayError {
  const detail = safeProviderMessage(bodyText);
  return new GatewayError('UPSTREAM_ERROR', `Provider ${provider} answered ${status}${detail ? `: ${detail}` : ''}`);
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Any failure of the transport as a GatewayError; abort errors pass through for the caller. */
export function transportError(provider: string, err: unknown, signal: AbortSignal): unknown {
  if (err instanceof GatewayError) return err;
  if (signal.aborted) return err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) {
    const what = code === 'UND_ERR_BODY_TIMEOUT' ? 'stopped sending' : code === 'UND_ERR_HEADERS_TIMEOUT' ? 'did not answer in time' : 'could not be reached in time';
    return new GatewayError('UPSTREAM_TIMEOUT', `Provider ${provider} ${what}.`, { cause: err });
  }
  return new GatewayError('UPSTREAM_ERROR', `Provider ${provider} failed (${code || 'connection error'}).`, { cause: err });
}

/** Reads at most `limit` bytes of an error body (a provider may send a whole HTML page). */
export async function readLimited(body: AsyncIterable<Buffer | Uint8Array>, limit = 8192): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) parts.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return Buffer.concat(parts).subarray(0, limit).toString('utf8');
}
