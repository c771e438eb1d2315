import { readFileSync } from 'node:fs';
import { Errors } from '@gateway/shared';
import { gaxios, JWT } from 'google-auth-library';
import { providerTextDetail, withProviderText } from '../upstream-error.js';

/**
 * Access tokens for Vertex AI from a service account's key file, through google-auth-library (it
 * signs the JWT assertion and exchanges it). The exchange goes to the key file's own `token_uri`:
 * the library would always call Google's, so its transport is pointed there.
 *
 * Tokens are fetched off the request path: one at start, and each next one when less than
 * min(5 min, a tenth of the token's lifetime) remains. A request takes the current token as it is;
 * only when there is none (at start, or after refreshes failed until it expired) does it wait, for
 * the one fetch every waiting request shares. A failed refresh is tried again while the old token
 * still holds.
 */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const MAX_AHEAD_MS = 5 * 60_000;
const RETRY_MS = 1_000;
const TOKEN_TIMEOUT_MS = 10_000;
/** A token is not sent in its last second (or twentieth of its life): it could arrive expired. */
const MARGIN_MS = 1_000;

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

/** Reads and checks the key file; the message names the file and field, never the key. */
export function readServiceAccountKey(provider: string, path: string): ServiceAccountKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`provider ${provider}: credentials_file ${path} ${code === undefined ? 'is not JSON' : `cannot be read (${code})`}`);
  }
  const key = parsed as Partial<ServiceAccountKey> & { type?: unknown };
  if (typeof key !== 'object' || key === null || key.type !== 'service_account') throw new Error(`provider ${provider}: credentials_file ${path} is not a service account key (type must be service_account)`);
  for (const field of ['client_email', 'private_key', 'token_uri'] as const) {
    if (typeof key[field] !== 'string' || key[field] === '') throw new Error(`provider ${provider}: credentials_file ${path} has no ${field}`);
  }
  if (!/^https?:\/\//.test(key.token_uri as string)) throw new Error(`provider ${provider}: credentials_file ${path}: token_uri must be an http(s) URL`);
  return key as ServiceAccountKey;
}

export class VertexTokenSource {
  private token: string | null = null;
  /** When the token stops being sent: a little before it expires, so it never arrives expired. */
  private usableUntil = 0;
  private pending: Promise<string> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly client: JWT;
  /** Tokens fetched so far (for metrics and tests). */
  fetched = 0;

  constructor(
    private readonly provider: string,
    key: ServiceAccountKey,
  ) {
    const transporter = new gaxios.Gaxios();
    const tokenUri = key.token_uri;
    transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        // A request waiting for a first token should fail over soon, not sit through the
        // library's backoff: retries are this source's (every second while the old token holds).
        options.retryConfig = { ...options.retryConfig, retry: 0 };
        options.timeout = TOKEN_TIMEOUT_MS;
        return options;
      },
    });
    this.client = new JWT({
      email: key.client_email,
      key: key.private_key,
      ...(key.private_key_id === undefined ? {} : { keyId: key.private_key_id }),
      scopes: [CLOUD_PLATFORM_SCOPE],
      transporter,
      // Every call fetches: when to refresh is decided here, not by the library's own margin.
      eagerRefreshThresholdMillis: Number.MAX_SAFE_INTEGER,
    });
    this.fetch().catch(() => undefined);
  }

  /** The token to send now: at once when one holds, else the fetch under way. */
  current(): string | Promise<string> {
    if (this.token !== null && Date.now() < this.usableUntil) return this.token;
    return this.pending ?? this.fetch();
  }

  private fetch(): Promise<string> {
    if (this.pending !== null) return this.pending;
    const started = Date.now();
    this.pending = this.client
      .authorize()
      .then((credentials) => {
        const token = credentials.access_token;
        const expiry = credentials.expiry_date;
        if (typeof token !== 'string' || token === '' || typeof expiry !== 'number') throw new Error('no access_token or expiry in the answer');
        this.token = token;
        this.fetched++;
        const lifetime = Math.max(0, expiry - started);
        this.usableUntil = expiry - Math.min(MARGIN_MS, lifetime / 20);
        this.schedule(expiry - Math.min(MAX_AHEAD_MS, lifetime / 10) - Date.now());
        return token;
      })
      .catch((err: unknown) => {
        // Try again soon while the current token still holds; once it has expired, the next
        // request's own fetch is the retry.
        if (this.token !== null && Date.now() < this.usableUntil) this.schedule(Math.min(RETRY_MS, (this.usableUntil - Date.now()) / 2));
        // The token endpoint's complaint may name the service account: scrubbed as any provider text.
        const said = providerTextDetail(err instanceof Error ? err.message : 'unknown error');
        throw withProviderText(Errors.providerTokenUnavailable(this.provider, said.message), said);
      })
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fetch().catch(() => undefined);
    }, Math.max(0, delayMs));
    this.timer.unref();
  }

  /** The provider refused the current token (401): forget it and fetch another now. */
  refused(token: string): void {
    if (this.token !== token) return;
    this.token = null;
    this.fetch().catch(() => undefined);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
