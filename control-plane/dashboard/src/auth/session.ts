import { ApiError } from '../api/api-error.js';
import type { TokenResponse, User } from '../api/types.js';
import { refreshDelayMs, refreshIsDue, retryDelayMs } from './refresh-schedule.js';

/**
 * The signed-in state. The access token lives in this object only: not in localStorage,
 * sessionStorage or a readable cookie, where any script on the origin or anything with disk
 * access could find it. What survives a reload is the session cookie the password grant sets:
 * httpOnly (no script reads it), sent only to POST /v1/signins, and good only for minting a new
 * access token, which restore() does when the page loads. Expiry is counted on this machine's
 * clock from `expires_in`, so a skewed clock cannot make a fresh token look expired.
 */
export type SessionState =
  | { status: 'restoring' }
  | { status: 'signed-out'; reason: string | null }
  | { status: 'signed-in'; user: User; expiresAt: number };

export type TimerHandle = unknown;

export interface SessionDeps {
  /**
   * POST /v1/signins with the body, and the bearer for the refresh grant; without a bearer the
   * refresh grant uses the session cookie.
   */
  grant(body: Record<string, string | boolean>, bearer: string | null): Promise<TokenResponse>;
  /** POST /v1/signouts with the token: ends the session on the server and clears the cookie. */
  revoke(token: string): Promise<void>;
  /** GET /v1/users/me with the new token. */
  me(token: string): Promise<User>;
  now(): number;
  setTimer(run: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export const EXPIRED = 'Your session expired. Sign in again.';
export const ENDED = 'Your session ended. Sign in again.';
export const SIGNED_OUT = 'You signed out.';
export const SIGNOUT_UNCONFIRMED =
  'You signed out of this tab, but the control plane could not be reached to end the session: a reload may sign you in again. Sign out again once it is back.';

export class Session {
  private token: string | null = null;
  private expiresAt = 0;
  private refreshAt = 0;
  private timer: TimerHandle | null = null;
  private attempt = 0;
  private refreshing: Promise<void> | null = null;
  /** A sign-out is under way: calls refused meanwhile are its doing, not news to announce. */
  private ending = false;
  private current: SessionState = { status: 'signed-out', reason: null };
  private readonly listeners = new Set<(state: SessionState) => void>();

  constructor(private readonly deps: SessionDeps) {}

  get state(): SessionState {
    return this.current;
  }

  /** The bearer for API calls; null when signed out or past expiry. */
  accessToken(): string | null {
    if (this.token !== null && this.deps.now() >= this.expiresAt) {
      this.expired();
      return null;
    }
    return this.token;
  }

  subscribe(listener: (state: SessionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The password grant, asking for the session cookie too. */
  async signIn(email: string, password: string): Promise<void> {
    const issuedAt = this.deps.now();
    const token = await this.deps.grant({ grant_type: 'password', email, password, refresh_cookie: true }, null);
    await this.begin(token, issuedAt);
  }

  /**
   * On page load (and, `quiet`ly behind the sign-in page, when a token died while the tab slept):
   * the refresh grant with the session cookie, if the browser has one. Any refusal means signed
   * out, with `reason`.
   */
  restore(reason: string | null = null, options: { quiet?: boolean } = {}): Promise<void> {
    if (!options.quiet) this.publish({ status: 'restoring' });
    const issuedAt = this.deps.now();
    return this.deps
      .grant({ grant_type: 'refresh' }, null)
      .then((token) => this.begin(token, issuedAt))
      .catch(() => this.signOut(reason));
  }

  /**
   * Sign-out asked for by the person: the server ends the session (so the cookie and any copy of
   * the token are dead) and clears the cookie; then the token is forgotten here.
   */
  async end(): Promise<void> {
    const token = this.token;
    let confirmed = true;
    if (token !== null) {
      this.ending = true;
      try {
        await this.deps.revoke(token);
      } catch (err) {
        // Already over on the server is as good as signed out.
        confirmed = err instanceof ApiError && err.status === 401;
      } finally {
        this.ending = false;
      }
    }
    this.signOut(confirmed ? SIGNED_OUT : SIGNOUT_UNCONFIRMED);
  }

  private async begin(token: TokenResponse, issuedAt: number): Promise<void> {
    const user = await this.deps.me(token.access_token);
    this.accept(token, issuedAt);
    this.publish({ status: 'signed-in', user, expiresAt: this.expiresAt });
  }

  /** Trades the current token for a new one; concurrent callers share one request. */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Forgets the token here only (end() also ends the session on the server). */
  signOut(reason: string | null = null): void {
    this.token = null;
    this.expiresAt = 0;
    this.attempt = 0;
    this.cancelTimer();
    if (this.current.status === 'signed-out' && this.current.reason === reason) return;
    this.publish({ status: 'signed-out', reason });
  }

  /**
   * The API answered 401 to a call made with our token: it is no longer any good. The cookie may
   * still be: another tab changed the password and signed in again, which set a new one.
   */
  unauthorized(): void {
    if (this.token === null || this.ending) return;
    this.signOut(ENDED);
    void this.restore(ENDED, { quiet: true });
  }

  /**
   * For when the page becomes visible or the machine wakes: browsers hold back the timers of
   * hidden tabs, so a refresh that was due may not have run.
   */
  wake(): void {
    if (this.token === null) return;
    const now = this.deps.now();
    if (now >= this.expiresAt) this.expired();
    else if (refreshIsDue(now, this.refreshAt)) void this.refresh();
  }

  private async doRefresh(): Promise<void> {
    const token = this.token;
    if (token === null) return;
    if (this.deps.now() >= this.expiresAt) return this.expired();
    const issuedAt = this.deps.now();
    try {
      const next = await this.deps.grant({ grant_type: 'refresh' }, token);
      // Signed out (or in as someone else) while the request was out: the answer is stale.
      if (this.token !== token) return;
      this.accept(next, issuedAt);
      if (this.current.status === 'signed-in') this.publish({ ...this.current, expiresAt: this.expiresAt });
    } catch (err) {
      if (this.token !== token) return;
      if (err instanceof ApiError && err.status === 401) return this.signOut(ENDED);
      this.attempt += 1;
      const delay = retryDelayMs(this.attempt, this.expiresAt - this.deps.now());
      if (delay === null) return this.expired();
      this.refreshAt = this.deps.now() + delay;
      this.schedule(delay, () => void this.refresh());
    }
  }

  /** The token died unrefreshed (a long sleep, a long outage): the session cookie may still bring the session back. */
  private expired(): void {
    this.signOut(EXPIRED);
    void this.restore(EXPIRED, { quiet: true });
  }

  /** Lifetime counted from when the request was sent: the token can only be younger than that. */
  private accept(token: TokenResponse, issuedAt: number): void {
    const lifetimeMs = token.expires_in * 1000;
    this.token = token.access_token;
    this.expiresAt = issuedAt + lifetimeMs;
    this.attempt = 0;
    const delay = refreshDelayMs(lifetimeMs);
    this.refreshAt = issuedAt + delay;
    this.schedule(Math.max(0, this.refreshAt - this.deps.now()), () => void this.refresh());
  }

  private schedule(ms: number, run: () => void): void {
    this.cancelTimer();
    this.timer = this.deps.setTimer(run, ms);
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.deps.clearTimer(this.timer);
    this.timer = null;
  }

  private publish(state: SessionState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}
