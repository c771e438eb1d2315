import { describe, expect, it } from 'vitest';
import { ApiError } from '../../dashboard/src/api/api-error.js';
import type { TokenResponse, User } from '../../dashboard/src/api/types.js';
import { refreshDelayMs, refreshIsDue, retryDelayMs } from '../../dashboard/src/auth/refresh-schedule.js';
import { ENDED, EXPIRED, Session, SIGNED_OUT, SIGNOUT_UNCONFIRMED, type SessionState } from '../../dashboard/src/auth/session.js';

const HOUR = 3_600_000;

describe('refresh schedule', () => {
  it('refreshes the one-hour token five minutes before it expires', () => {
    expect(refreshDelayMs(HOUR)).toBe(55 * 60_000);
  });

  it('keeps a quarter of a short lifetime as margin', () => {
    expect(refreshDelayMs(60_000)).toBe(45_000);
    expect(refreshDelayMs(4_000)).toBe(3_000);
  });

  it('refreshes at once when there is no lifetime to wait out', () => {
    expect(refreshDelayMs(0)).toBe(0);
    expect(refreshDelayMs(-5)).toBe(0);
    expect(refreshDelayMs(Number.NaN)).toBe(0);
  });

  it('backs off from 2 s to a minute between failed tries, never past expiry', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => retryDelayMs(a, HOUR))).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(retryDelayMs(6, 10_000)).toBe(9_000);
    expect(retryDelayMs(1, 1_000)).toBeNull();
    expect(retryDelayMs(1, -1)).toBeNull();
  });

  it('notices a refresh that a sleeping tab let pass', () => {
    expect(refreshIsDue(100, 100)).toBe(true);
    expect(refreshIsDue(99, 100)).toBe(false);
  });
});

/** A clock and timers the test moves by hand, and a fake API behind the grants. */
function harness(options: { lifetimeS?: number; cookie?: boolean } = {}) {
  let now = 1_000_000;
  const timers: { at: number; run: () => void; id: number }[] = [];
  let nextId = 1;
  const grants: { body: Record<string, string | boolean>; bearer: string | null }[] = [];
  const revoked: string[] = [];
  let failNext: unknown[] = [];
  let revokeFails: unknown = null;
  /** Whether the browser holds a live session cookie (set by a password grant, cleared by revoke). */
  let cookie = options.cookie ?? false;
  let issued = 0;
  const user: User = { id: 'u1', email: 'a@example.test', role: 'member', disabled: false, created_at: '2025-01-01T00:00:00Z' };

  const session = new Session({
    grant: async (body, bearer) => {
      grants.push({ body, bearer });
      const failure = failNext.shift();
      if (failure !== undefined) throw failure;
      if (body.grant_type === 'refresh' && bearer === null && !cookie) throw new ApiError(401, 'UNAUTHORIZED', 'no bearer, no cookie');
      if (body.refresh_cookie === true) cookie = true;
      issued += 1;
      return { access_token: `token-${issued}`, token_type: 'Bearer', expires_in: options.lifetimeS ?? 3600 } satisfies TokenResponse;
    },
    revoke: async (token) => {
      if (revokeFails !== null) throw revokeFails;
      revoked.push(token);
      cookie = false;
    },
    me: async () => user,
    now: () => now,
    setTimer: (run, ms) => {
      const id = nextId++;
      timers.push({ at: now + ms, run, id });
      return id;
    },
    clearTimer: (id) => {
      const i = timers.findIndex((t) => t.id === id);
      if (i >= 0) timers.splice(i, 1);
    },
  });
  const states: SessionState[] = [];
  session.subscribe((s) => states.push(s));

  /** Moves the clock, firing due timers in order and letting their promises settle. */
  async function advance(ms: number) {
    const until = now + ms;
    for (;;) {
      timers.sort((a, b) => a.at - b.at);
      const due = timers[0];
      if (due === undefined || due.at > until) break;
      timers.shift();
      now = due.at;
      due.run();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
    now = until;
  }

  return {
    session,
    states,
    grants,
    revoked,
    failRevokeWith: (err: unknown) => {
      revokeFails = err;
    },
    timers,
    advance,
    failWith: (...errors: unknown[]) => {
      failNext = errors;
    },
    get now() {
      return now;
    },
    set now(value: number) {
      now = value;
    },
  };
}

describe('session', () => {
  it('signs in with the password grant and keeps the token in memory', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    expect(h.grants).toEqual([{ body: { grant_type: 'password', email: 'a@example.test', password: 'pw', refresh_cookie: true }, bearer: null }]);
    expect(h.session.accessToken()).toBe('token-1');
    expect(h.session.state).toMatchObject({ status: 'signed-in', user: { email: 'a@example.test' }, expiresAt: h.now + HOUR });
  });

  it('refreshes before expiry with the current token as the bearer, and keeps doing so', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    await h.advance(55 * 60_000 - 1);
    expect(h.grants).toHaveLength(1);
    await h.advance(1);
    expect(h.grants[1]).toEqual({ body: { grant_type: 'refresh' }, bearer: 'token-1' });
    expect(h.session.accessToken()).toBe('token-2');
    // The new token's own hour starts now, so the next refresh is 55 minutes on.
    await h.advance(55 * 60_000);
    expect(h.grants[2]).toEqual({ body: { grant_type: 'refresh' }, bearer: 'token-2' });
    expect(h.session.state.status).toBe('signed-in');
  });

  it('retries a refresh that failed for a network reason, then carries on', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.failWith(new ApiError(0, 'NETWORK', 'offline'), new ApiError(503, 'UNAVAILABLE', 'busy'));
    await h.advance(55 * 60_000);
    expect(h.session.accessToken()).toBe('token-1');
    await h.advance(2_000);
    expect(h.grants).toHaveLength(3);
    expect(h.session.accessToken()).toBe('token-1');
    await h.advance(4_000);
    expect(h.grants).toHaveLength(4);
    expect(h.session.accessToken()).toBe('token-2');
  });

  it('signs out when the refresh is refused with 401', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.failWith(new ApiError(401, 'UNAUTHORIZED', 'no'));
    await h.advance(55 * 60_000);
    expect(h.session.state).toEqual({ status: 'signed-out', reason: ENDED });
    expect(h.session.accessToken()).toBeNull();
    expect(h.timers).toHaveLength(0);
  });

  it('signs out at expiry when every retry failed', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.failWith(...Array.from({ length: 50 }, () => new ApiError(0, 'NETWORK', 'offline')));
    await h.advance(HOUR);
    expect(h.session.state).toEqual({ status: 'signed-out', reason: EXPIRED });
  });

  it('refreshes at once when the tab wakes up after its refresh time', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    // The browser held the timer back: the clock moved, the timer did not fire.
    h.now += 56 * 60_000;
    h.session.wake();
    await Promise.resolve();
    await Promise.resolve();
    expect(h.grants[1]?.body).toEqual({ grant_type: 'refresh' });
  });

  it('does not hand out a token past its expiry, even if no timer ran', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.now += HOUR;
    expect(h.session.accessToken()).toBeNull();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: EXPIRED });
  });

  it('forgets the token on sign-out and cancels the refresh', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.session.signOut('You signed out.');
    expect(h.session.accessToken()).toBeNull();
    expect(h.timers).toHaveLength(0);
    await h.advance(2 * HOUR);
    expect(h.grants).toHaveLength(1);
    expect(h.states.at(-1)).toEqual({ status: 'signed-out', reason: 'You signed out.' });
  });

  it('shares one refresh between concurrent callers', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    await Promise.all([h.session.refresh(), h.session.refresh(), h.session.refresh()]);
    expect(h.grants).toHaveLength(2);
  });

  it('ends the session when the API refuses the token', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.session.unauthorized();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: ENDED });
  });

  it('stays signed out when the password grant fails', async () => {
    const h = harness();
    h.failWith(new ApiError(401, 'UNAUTHORIZED', 'Wrong email or password.'));
    await expect(h.session.signIn('a@example.test', 'bad')).rejects.toMatchObject({ status: 401 });
    expect(h.session.state.status).toBe('signed-out');
    expect(h.timers).toHaveLength(0);
  });

  it('restores the session from the cookie on load, showing "restoring" meanwhile', async () => {
    const h = harness({ cookie: true });
    const restored = h.session.restore();
    expect(h.session.state).toEqual({ status: 'restoring' });
    await restored;
    expect(h.grants).toEqual([{ body: { grant_type: 'refresh' }, bearer: null }]);
    expect(h.session.state).toMatchObject({ status: 'signed-in', user: { email: 'a@example.test' } });
    expect(h.session.accessToken()).toBe('token-1');
  });

  it('shows the sign-in page when there is no session to restore', async () => {
    const h = harness();
    await h.session.restore();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: null });
    expect(h.timers).toHaveLength(0);
  });

  it('brings back a session whose token died while the tab slept, from the cookie', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.now += 2 * HOUR;
    expect(h.session.accessToken()).toBeNull();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: EXPIRED });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(h.session.state.status).toBe('signed-in');
    expect(h.session.accessToken()).toBe('token-2');
  });

  it('ends the session on the server on sign-out, so a reload does not bring it back', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    await h.session.end();
    expect(h.revoked).toEqual(['token-1']);
    expect(h.session.state).toEqual({ status: 'signed-out', reason: SIGNED_OUT });
    await h.session.restore();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: null });
  });

  it('says so when the server could not be told of the sign-out', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.failRevokeWith(new ApiError(0, 'NETWORK', 'offline'));
    await h.session.end();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: SIGNOUT_UNCONFIRMED });
    expect(h.session.accessToken()).toBeNull();
  });

  it('picks up the session another tab began (a password change there) when the API refuses this tab\'s token', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    h.session.unauthorized();
    expect(h.session.state).toEqual({ status: 'signed-out', reason: ENDED });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    // The cookie set by the sign-in is still good here, as a new one set by another tab would be.
    expect(h.session.state.status).toBe('signed-in');
    expect(h.grants.at(-1)).toEqual({ body: { grant_type: 'refresh' }, bearer: null });
  });

  it('does not announce the end of a session it is signing out of', async () => {
    const h = harness();
    await h.session.signIn('a@example.test', 'pw');
    const ending = h.session.end();
    // A call answered 401 while the sign-out is out (the server already ended the session).
    h.session.unauthorized();
    expect(h.session.state.status).toBe('signed-in');
    await ending;
    expect(h.session.state).toEqual({ status: 'signed-out', reason: SIGNED_OUT });
    expect(h.grants).toHaveLength(1);
  });
});
