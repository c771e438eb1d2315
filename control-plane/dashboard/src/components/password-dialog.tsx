import { useState } from 'preact/hooks';
import { useApi, useSession } from '../auth/session-context.js';
import { ErrorBanner } from './error-banner.js';
import { Dialog } from './dialog.js';
import { TextField, useFieldErrors } from './field.js';
import { useToasts } from './toasts.js';

/**
 * Changing one's own password: the current one as proof, the new one twice. The API applies the
 * policy (12 characters at least, not the email) and its refusal is shown on the field. A change
 * ends every session of the account begun before it, this one included, so the dialog signs in
 * again with the new password at once: the person stays signed in here, and only here.
 */
const POLICY = 'At least 12 characters, and not your email address. A passphrase of a few words is easy to remember.';

export function PasswordDialog({ open, email, onClose }: { open: boolean; email: string; onClose: () => void }) {
  return (
    <Dialog open={open} title="Change your password" onClose={onClose}>
      {open && <PasswordForm email={email} onDone={onClose} />}
    </Dialog>
  );
}

function PasswordForm({ email, onDone }: { email: string; onDone: () => void }) {
  const api = useApi();
  const session = useSession();
  const notify = useToasts();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = useFieldErrors({ current_password: 'current', new_password: 'next' });

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    if (next !== again) return fields.set('again', 'The two new passwords differ. Type the same one twice.');
    setBusy(true);
    try {
      await api.post<void>('/v1/users/me/password', { current_password: current, new_password: next });
    } catch (err) {
      setBusy(false);
      if (!fields.fromApi(err)) setError(err);
      return;
    }
    try {
      await session.signIn(email, next);
      notify('Password changed. Your other sessions (other browsers, scripts) were signed out.');
    } catch {
      // The change went through; only the new sign-in did not. The session is over either way.
      session.signOut('Your password was changed. Sign in with the new one.');
    }
    onDone();
  };

  const input = (field: string, set: (v: string) => void) => (value: string) => {
    set(value);
    fields.clear(field);
  };
  return (
    <form class="stack" onSubmit={submit} noValidate>
      <ErrorBanner error={error} action="Changing the password failed" />
      <TextField id="pw-current" label="Current password" type="password" autocomplete="current-password" required value={current} onInput={input('current', setCurrent)} error={fields.errors.current} autofocus />
      <TextField id="pw-new" label="New password" type="password" autocomplete="new-password" required value={next} onInput={input('next', setNext)} error={fields.errors.next} hint={POLICY} />
      <TextField id="pw-again" label="New password again" type="password" autocomplete="new-password" required value={again} onInput={input('again', setAgain)} error={fields.errors.again} />
      <p class="hint">Changing it signs out every other session of your account.</p>
      <div class="dialog-actions">
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}
