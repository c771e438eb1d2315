import { AddressNotAllowed, bareHost, guardedLookup, refusedLiteral, type Resolver } from '@gateway/shared';
import { Agent, request } from 'undici';
import { sign } from './signing.js';

/**
 * One HTTP attempt of one delivery: POST of the event's exact body with the Standard Webhooks
 * headers, answered within the timeout. A 2xx is success; anything else, a redirect included
 * (never followed: the endpoint is told to use its final URL), is a failure. Unless private
 * addresses are allowed, every connection goes only to an address that passed the rule, checked
 * at connect time (shared/src/net/address-policy.ts), whatever the name resolved to when the webhook was made.
 *
 * A failure is described in the gateway's own words from a fixed set: never the URL (its query
 * may carry a token), the answer's body, or a library's message.
 */
export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Name resolution; the system's by default (tests put a fixed answer here). */
  resolve?: Resolver;
}

export interface AttemptResult {
  ok: boolean;
  /** The answer's status, null without an answer. */
  status: number | null;
  /** Why it failed; null on success. */
  error: string | null;
  /** The endpoint answered 410 Gone: it wants no more deliveries. */
  gone: boolean;
}

const USER_AGENT = 'model-gateway-webhooks/1';
const BODY_READ_LIMIT = 64 * 1024;

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new Agent({
      connections: 16,
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs, ...(options.allowPrivate ? {} : { lookup: guardedLookup(options.resolve) }) },
    });
  }

  async send(target: { url: string; secret: string }, event: { id: string; body: string }): Promise<AttemptResult> {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return failure(null, 'the URL is not valid');
    }
    // An address literal is connected to without any lookup: it is checked here instead.
    if (!this.options.allowPrivate && refusedLiteral(url)) return failure(null, describe(new AddressNotAllowed(bareHost(url)), this.options.timeoutMs));
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(target.secret, event.id, timestamp, event.body),
        },
        body: event.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      // The answer's body means nothing here; read a little of it so the connection can be reused.
      await res.body.dump({ limit: BODY_READ_LIMIT }).catch(() => {});
      const status = res.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status, error: null, gone: false };
      if (status >= 300 && status < 400) return failure(status, `HTTP ${status}: redirects are not followed; give the webhook its final URL`);
      return { ...failure(status, `HTTP ${status}`), gone: status === 410 };
    } catch (err) {
      return failure(null, describe(err, this.options.timeoutMs));
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }
}

function failure(status: number | null, error: string): AttemptResult {
  return { ok: false, status, error, gone: false };
}

const TLS = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/;

/** A failure without an answer, in a fixed wording. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as { code?: unknown; name?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : typeof (e.cause as { code?: unknown } | undefined)?.code === 'string' ? ((e.cause as { code: string }).code) : '';
  const name = typeof e.name === 'string' ? e.name : '';
  if (code === 'EADDRNOTALLOWED') return 'refused: the host resolves to a private, loopback, link-local or other non-public address';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'the host name does not resolve';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return 'the connection was closed before an answer';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'the host is unreachable';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `no connection within ${timeoutMs / 1000} s`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  if (TLS.test(code)) return 'TLS failed (is the certificate valid for this host?)';
  return /^[A-Z0-9_]{2,40}$/.test(code) ? `the request failed (${code})` : 'the request failed';
}
