import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { createApiClient, type ApiClient } from '../api/client.js';
import type { TokenResponse, User } from '../api/types.js';
import { Session, type SessionState } from './session.js';

/** One session and one API client for the page, wired to the browser's timers and visibility. */
interface SessionValue {
  session: Session;
  api: ApiClient;
}

const SessionContext = createContext<SessionValue | null>(null);

/**
 * The session cookie is replaced at every use, and a replaced one presented again ends the session
 * (it looks stolen). Tabs loaded together would each present the same cookie at once, so the
 * cookie refreshes of this browser take turns (Web Locks): each one then sends the cookie the one
 * before it received.
 */
function cookieGrant<T>(run: () => Promise<T>, usesCookie: boolean): Promise<T> {
  if (!usesCookie || typeof navigator === 'undefined' || navigator.locks === undefined) return run();
  return navigator.locks.request('gateway-session-cookie', run) as Promise<T>;
}

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const value = useMemo<SessionValue>(() => {
    // Sign-in and refresh carry their own bearer (none, or the token being replaced).
    const withBearer = (bearer: string | null) => createApiClient({ token: () => bearer, onUnauthorized: () => {} });
    // The calls that set, use or clear the session cookie send it; X-Requested-With is the proof,
    // which no cross-site form can give, that the refresh comes from this page.
    const withCookie = (bearer: string | null) =>
      createApiClient({ token: () => bearer, onUnauthorized: () => {}, credentials: 'same-origin', headers: { 'x-requested-with': 'gateway-dashboard' } });
    const session = new Session({
      grant: (body, bearer) => cookieGrant(() => withCookie(bearer).post<TokenResponse>('/v1/signins', body), bearer === null && body.grant_type === 'refresh'),
      revoke: (token) => withCookie(token).post<void>('/v1/signouts', undefined),
      me: (token) => withBearer(token).get<User>('/v1/users/me'),
      now: () => Date.now(),
      setTimer: (run, ms) => window.setTimeout(run, ms),
      clearTimer: (handle) => window.clearTimeout(handle as number),
    });
    const api = createApiClient({ token: () => session.accessToken(), onUnauthorized: () => session.unauthorized() });
    // Before the first render, so a reload shows "restoring" rather than a flash of the sign-in form.
    void session.restore();
    return { session, api };
  }, []);

  useEffect(() => {
    const wake = () => {
      if (document.visibilityState === 'visible') value.session.wake();
    };
    document.addEventListener('visibilitychange', wake);
    window.addEventListener('focus', wake);
    window.addEventListener('online', wake);
    return () => {
      document.removeEventListener('visibilitychange', wake);
      window.removeEventListener('focus', wake);
      window.removeEventListener('online', wake);
    };
  }, [value]);

  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

function useSessionValue(): SessionValue {
  const value = useContext(SessionContext);
  if (value === null) throw new Error('useSession outside SessionProvider');
  return value;
}

export function useSession(): Session {
  return useSessionValue().session;
}

export function useApi(): ApiClient {
  return useSessionValue().api;
}

export function useSessionState(): SessionState {
  const session = useSession();
  const [state, setState] = useState(session.state);
  useEffect(() => {
    const unsubscribe = session.subscribe(setState);
    // The session may have moved on between the first render and this effect (the restore on
    // load answers quickly): catch up, or the page would wait for a change already announced.
    setState(session.state);
    return unsubscribe;
  }, [session]);
  return state;
}

/** The signed-in account; only rendered inside the signed-in part of the app. */
export function useUser(): User {
  const state = useSessionState();
  if (state.status !== 'signed-in') throw new Error('useUser while signed out');
  return state.user;
}
