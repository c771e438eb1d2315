import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/api-error.js';
import { useSession } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';

/** The password grant. The token it returns stays in memory; nothing is written to storage. */
export function SigninPage({ reason }: { reason: string | null }) {
  const session = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const emailRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    document.title = 'Sign in · Model gateway';
    emailRef.current?.focus();
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await session.signIn(email.trim(), password);
    } catch (err) {
      setError(err);
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
        {reason !== null && error === null && (
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
        <form onSubmit={submit} aria-describedby={error === null ? undefined : 'signin-error'}>
          <div class="field">
            <label for="signin-email">Email</label>
            <input
              id="signin-email"
              ref={emailRef}
              type="email"
              name="email"
              autocomplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              aria-invalid={wrongCredentials}
            />
          </div>
          <div class="field">
            <label for="signin-password">Password</label>
            <input
              id="signin-password"
              type="password"
              name="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              aria-invalid={wrongCredentials}
            />
          </div>
          <button type="submit" class="button-primary button-wide" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="muted small">You stay signed in while this tab is open; reloading the page signs you out.</p>
      </div>
    </main>
  );
}
