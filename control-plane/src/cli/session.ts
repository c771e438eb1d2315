import { AuthError, CliError, UnreachableError } from './cli-errors.js';
import { writeConfig, type StoredConfig } from './config-file.js';
import { failure, type Http } from './http.js';

/**
 * The saved sign-in. Tokens live an hour; one with less than REFRESH_BEFORE_MS left is traded
 * for a new one of the same session (the refresh grant) before it is used, and the file is
 * rewritten, so an operator signs in once per session (SESSION_MAX_AGE_HOURS), not once an hour.
 */
export const REFRESH_BEFORE_MS = 10 * 60_000;

export interface Token {
  access_token: string;
  expires_in: number;
}

export class Session {
  constructor(
    private readonly http: Http,
    private readonly location: { path: string; ownDirectory: boolean },
    private config: StoredConfig,
    private readonly now: () => number = Date.now,
  ) {}

  async bearer(): Promise<string> {
    const { token, expires_at: expiresAt = 0 } = this.config;
    if (token === undefined) throw new AuthError(`not signed in to ${this.config.url}; sign in with: gatewayctl login`);
    const left = expiresAt - this.now();
    if (left <= 0) throw new AuthError('the saved sign-in has expired; sign in again with: gatewayctl login');
    const sessionEnding = this.config.session_ends_at !== undefined;
    if (left >= REFRESH_BEFORE_MS || sessionEnding) return token;
    try {
      return await this.refresh(token);
    } catch (err) {
      // A refused refresh means the session is over, and an unreachable server fails the request
      // anyway; any other trouble (a 503) leaves the current, still valid token in use.
      if (err instanceof AuthError || err instanceof UnreachableError || !(err instanceof CliError)) throw err;
      return token;
    }
  }

  private async refresh(current: string): Promise<string> {
    const answer = await this.http.send({ method: 'POST', path: '/v1/signins', body: { grant_type: 'refresh' }, bearer: current });
    if (answer.status !== 200) throw failure(answer, this.http.base);
    const fresh = answer.body as Token;
    this.config = { ...this.config, ...tokenFields(fresh, this.now()) };
    // A token shorter than the refresh margin means the session ends with it: refreshing again gains nothing.
    if (fresh.expires_in * 1000 < REFRESH_BEFORE_MS) this.config.session_ends_at = this.config.expires_at;
    await writeConfig(this.location, this.config);
    return fresh.access_token;
  }
}

export function tokenFields(token: Token, now: number): Pick<StoredConfig, 'token' | 'expires_at'> {
  return { token: token.access_token, expires_at: now + token.expires_in * 1000 };
}
