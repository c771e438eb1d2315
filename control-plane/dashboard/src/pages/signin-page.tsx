import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/api-error.js';
import { createApiClient } from '../api/client.js';
import { useSession } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { TextField, useFieldErrors } from '../components/field.js';
import './signin-page.css';

/** GET /v1/signins: which ways in the control plane offers. */
interface SigninMethods {
  password: boolean;
  sso: boolean;
}

/** Until the answer: the password form, as before single sign-on existed. */
const PASSWORD_ONLY: SigninMethods = { password: true, sso: false };

const SSO_ERROR_COOKIE = 'gateway_sso_error';

/**
 * Why a single sign-on came back refused: the callback leaves it in a short-lived cookie (never in
 * the address, where a link of anyone's making could put any text), shown once and deleted.
 */
function takeSsoError(): string | null {
  const found = document.cookie.split('; ').find((c) => c.startsWith(`${SSO_ERROR_COOKIE}=`));
  if (found === undefined) return null;
  document.cookie = `${SSO_ERROR_COOKIE}=; Max-Age=0; Path=/; SameSite=Lax`;
  try {
    return decodeURIComponent(found.slice(SSO_ERROR_COOKIE.length + 1));
  } catch {
    return null;
  }
}

/**
 * The password grant, and single sign-on when the control plane has it (a link to
 * GET /v1/signins/oidc, which leaves for the identity provider and comes back signed in). The
 * access token stays in memory; the session cookie either way sets is httpOnly, so nothing
 * readable is written anywhere.
 */
export function SigninPage({ reason }: { reason: string | null }) {
  const session = useSession();
  const [methods, setMethods] = useState<SigninMethods>(PASSWORD_ONLY);
  const [ssoError] = useState(takeSsoError);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const form = useRef<HTMLFormElement>(null);
  const fields = useFieldErrors({ email: 'email', password: 'password' });

  useEffect(() => {
    document.title = 'Sign in · Model gateway';
    form.current?.querySelector<HTMLInputElement>('#signin-email')?.focus();
    createApiClient({ token: () => null, onUnauthorized: () => {} })
      .get<SigninMethods>('/v1/signins')
      .then(setMethods)
      // An older control plane without the route: the password form it always had.
      .catch(() => {});
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    fields.reset();
    const missing = email.trim() === '' ? 'email' : password === '' ? 'password' : null;
    if (missing !== null) {
      fields.set(missing, missing === 'email' ? 'Enter the email you sign in with.' : 'Enter your password.');
      form.current?.querySelector<HTMLInputElement>(`#signin-${missing}`)?.focus();
      return;
    }
    setBusy(true);
    try {
      await session.signIn(email.trim(), password);
    } catch (err) {
      if (!fields.fromApi(err)) setError(err);
      setPassword('');
      setBusy(false);
    }
  };

  const wrongCredentials = error instanceof ApiError && error.status === 401;
  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <p class="brand brand-large" aria-hidden="true">
          Model gateway
        </p>
        <h1 tabIndex={-1}>Sign in</h1>
        {ssoError !== null && error === null && (
          <div class="banner banner-error" role="alert" id="sso-error">
            <span aria-hidden="true">⚠ </span>
            <strong>Single sign-on failed: </strong>
            {ssoError}
          </div>
        )}
        {reason !== null && error === null && ssoError === null && (
          <p class="banner banner-info" role="status">
            <span aria-hidden="true">ℹ </span>
            {reason}
          </p>
        )}
        {wrongCredentials ? (
          <div class="banner banner-error" role="alert" id="signin-error">
            <span aria-hidden="true">⚠ </span>
            <strong>Error: </strong>wrong email or password.
          </div>
        ) : (
          <ErrorBanner error={error} action="Sign-in failed" id="signin-error" />
        )}
        {methods.sso && (
          <>
            <a class="button-sso" href="/v1/signins/oidc">
              Sign in with SSO
            </a>
            {methods.password && <p class="signin-or muted small">or with your password</p>}
          </>
        )}
        {!methods.password && <p class="muted small">Password sign-in is turned off here; use single sign-on.</p>}
        <form ref={form} onSubmit={submit} hidden={!methods.password} aria-describedby={error === null ? undefined : 'signin-error'} noValidate>
          <TextField
            id="signin-email"
            label="Email"
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(v) => {
              setEmail(v);
              fields.clear('email');
            }}
            error={fields.errors.email}
          />
          <TextField
            id="signin-password"
            label="Password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(v) => {
              setPassword(v);
              fields.clear('password');
            }}
            error={fields.errors.password}
          />
          <button type="submit" class="button-primary button-wide" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="muted small">You stay signed in on this browser, across reloads and tabs, until you sign out or the session reaches its maximum age.</p>
      </div>
    </main>
  );
}
