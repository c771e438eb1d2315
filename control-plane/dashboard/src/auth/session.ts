import { ApiError } from '../api/api-error.js';
import type { TokenResponse, User } from '../api/types.js';
import { refreshDelayMs, refreshIsDue, retryDelayMs } from './refresh-schedule.js';

/**
 * The signed-in state. The token lives in this object only: not in localStorage, sessionStorage
 * or a cookie, where any script on the origin or anything with disk access could find it. The
 * price is that a reload signs out. Expiry is counted on this machine's clock from `expires_in`,
 * so a skewed clock cannot make a fresh token look expired.
 */
export type SessionState =
  | { status: 'signed-out'; reason: string | null }
  | { status: 'signed-in'; user: User; expiresAt: number };

export type TimerHandle = unknown;

export interface SessionDeps {
  /** POST /v1/signins with the body, and the bearer for the refresh grant. */
  grant(body: Record<string, string>, bearer: string | null): Promise<TokenResponse>;
  /** GET /v1/users/me with the new token. */
  me(token: string): Promise<User>;
  now(): number;
  setTimer(run: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export const EXPIRED = 'Your session expired. Sign in again.';
export const ENDED = 'Your session ended. Sign in again.';

export class Session {
  private token: string | null = null;
  private expiresAt = 0;
  private refreshAt = 0;
  private timer: TimerHandle | null = null;
  private attempt = 0;
  private refreshing: Promise<void> | null = null;
  private current: SessionState = { status: 'signed-out', reason: null };
  private readonly listeners = new Set<(state: SessionState) => void>();

  constructor(private readonly deps: SessionDeps) {}

  get state(): SessionState {
    return this.current;
  }

  /** The bearer for API calls; null when signed out or past expiry. */
  accessToken(): string | null {
    if (this.token !== null && this.deps.now() >= this.expiresAt) {
      this.signOut(EXPIRED);
      return null;
    }
    return this.token;
  }

  subscribe(listener: (state: SessionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async signIn(email: string, password: string): Promise<void> {
    const issuedAt = this.deps.now();
    const token = await this.deps.grant({ grant_type: 'password', email, password }, null);
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

  /** Forgets the token. A JWT cannot be recalled; it dies at its expiry, unused. */
  signOut(reason: string | null = null): void {
    this.token = null;
    this.expiresAt = 0;
    this.attempt = 0;
    this.cancelTimer();
    if (this.current.status === 'signed-out' && this.current.reason === reason) return;
    this.publish({ status: 'signed-out', reason });
  }

  /** The API answered 401 to a call made with our token: it is no longer any good. */
  unauthorized(): void {
    if (this.token !== null) this.signOut(ENDED);
  }

  /**
   * For when the page becomes visible or the machine wakes: browsers hold back the timers of
   * hidden tabs, so a refresh that was due may not have run.
   */
  wake(): void {
    if (this.token === null) return;
    const now = this.deps.now();
    if (now >= this.expiresAt) this.signOut(EXPIRED);
    else if (refreshIsDue(now, this.refreshAt)) void this.refresh();
  }

  private async doRefresh(): Promise<void> {
    const token = this.token;
    if (token === null) return;
    if (this.deps.now() >= this.expiresAt) return this.signOut(EXPIRED);
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
      if (delay === null) return this.signOut(EXPIRED);
      this.refreshAt = this.deps.now() + delay;
      this.schedule(delay, () => void this.refresh());
    }
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
