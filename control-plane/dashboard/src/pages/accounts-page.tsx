import { useState } from 'preact/hooks';
import { ACCOUNT_ROLES, type AccountRole, type Page, type User } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { Dialog } from '../components/dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FieldProblem, TextField, useFieldErrors } from '../components/field.js';
import { PageHeading } from '../components/page-heading.js';
import { PasswordDialog } from '../components/password-dialog.js';
import { currentCursor, firstPage, Pager, type PagerState } from '../components/pager.js';
import { useToasts } from '../components/toasts.js';
import { formatDateTime } from '../lib/format.js';
import { useAsync } from '../lib/use-async.js';
import './accounts-page.css';

/**
 * Accounts, for account admins (the navigation leaves the page out for everyone else, and the API
 * refuses them regardless): find accounts by email, create one, change its account role, disable
 * or enable it, and set a new password for someone locked out. Project roles are given on each
 * project's Members page.
 */
const PAGE_SIZE = 25;
const ROLE_HELP: Record<AccountRole, string> = {
  member: 'sees only the projects it is a member of',
  admin: 'sees and manages every project and every account',
};
const PASSWORD_POLICY = 'At least 12 characters, and not the email address.';

export function AccountsPage() {
  const api = useApi();
  const me = useUser();
  const [search, setSearch] = useState('');
  const [filter, setFilter] = useState('');
  const [pager, setPager] = useState<PagerState>(firstPage);
  const cursor = currentCursor(pager);
  const accounts = useAsync(() => api.get<Page<User>>('/v1/users', { email: filter || undefined, limit: PAGE_SIZE, cursor: cursor ?? undefined }), [filter, cursor]);
  const [actionError, setActionError] = useState<unknown>(null);
  const [resetting, setResetting] = useState<User | null>(null);
  const [disabling, setDisabling] = useState<User | null>(null);
  const [changingOwn, setChangingOwn] = useState(false);
  const notify = useToasts();

  const patch = async (user: User, change: { role?: AccountRole; disabled?: boolean }, done: string) => {
    setActionError(null);
    try {
      await api.patch<User>(`/v1/users/${user.id}`, change);
      notify(done);
    } catch (err) {
      setActionError(err);
    }
    accounts.reload();
  };

  return (
    <>
      <PageHeading title="Accounts" />
      <p class="lead">Who can sign in, and as what. Project roles are given on each project’s Members page.</p>
      <CreateAccountForm
        onCreated={(user) => {
          notify(`Account ${user.email} created. Give them their password, then add them to projects.`);
          accounts.reload();
        }}
      />
      <section aria-labelledby="account-list-heading" aria-busy={accounts.loading}>
        <div class="section-heading">
          <h2 id="account-list-heading">All accounts</h2>
        </div>
        <form
          class="form-row account-search"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setFilter(search.trim());
            setPager(firstPage());
          }}
        >
          <TextField id="account-search" label="Email contains" type="search" value={search} onInput={setSearch} class="field-grow" />
          <div class="field field-submit">
            <button type="submit">Search</button>
          </div>
        </form>
        <ErrorBanner error={accounts.error} action="Loading accounts failed" />
        <ErrorBanner error={actionError} action="Changing the account failed" />
        {accounts.data !== undefined && accounts.data.data.length === 0 && <p class="empty">{filter ? `No account’s email contains “${filter}”.` : 'No accounts.'}</p>}
        {accounts.data !== undefined && accounts.data.data.length > 0 && (
          <div class="table-scroll" role="region" aria-labelledby="account-list-heading" tabIndex={0}>
            <table class="accounts table-stack">
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Account role</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col" class="cell-actions">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {accounts.data.data.map((user) => (
                  <tr key={user.id} class={user.disabled ? 'row-off' : undefined}>
                    <th scope="row" class="wrap-anywhere">
                      {user.email}
                      {user.id === me.id && <span class="muted"> (you)</span>}
                    </th>
                    <td data-label="Account role">
                      <select
                        aria-label={`Account role of ${user.email}`}
                        value={user.role}
                        onChange={(e) => {
                          const role = e.currentTarget.value as AccountRole;
                          void patch(user, { role }, `${user.email} is now an account ${role}.`);
                        }}
                      >
                        {ACCOUNT_ROLES.map((r) => (
                          <option value={r} key={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td data-label="State">
                      {user.disabled ? (
                        <span class="badge badge-disabled">○ disabled</span>
                      ) : (
                        <span class="badge badge-enabled">● enabled</span>
                      )}
                    </td>
                    <td class="nowrap" data-label="Created">
                      {formatDateTime(user.created_at)}
                    </td>
                    <td class="cell-actions">
                      <div class="row-actions">
                        {/* Your own password is changed as in the account menu (it asks for the current one);
                            disabling yourself would end the session you are using. */}
                        {user.id === me.id ? (
                          <button type="button" onClick={() => setChangingOwn(true)}>
                            Change my password
                          </button>
                        ) : (
                          <button type="button" onClick={() => setResetting(user)} aria-label={`Set a new password for ${user.email}`}>
                            New password
                          </button>
                        )}
                        {user.id === me.id ? null : user.disabled ? (
                          <button type="button" onClick={() => void patch(user, { disabled: false }, `${user.email} can sign in again.`)} aria-label={`Enable ${user.email}`}>
                            Enable
                          </button>
                        ) : (
                          <button type="button" class="button-danger-quiet" onClick={() => setDisabling(user)} aria-label={`Disable ${user.email}`}>
                            Disable
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {accounts.data !== undefined && (pager.stack.length > 1 || accounts.data.has_more) && (
          <Pager state={pager} nextCursor={accounts.data.next_cursor} shown={accounts.data.data.length} pageSize={PAGE_SIZE} onChange={setPager} label="Pages of accounts" loading={accounts.loading} />
        )}
        <p class="hint">
          An account {ACCOUNT_ROLES.map((r, i) => `${i > 0 ? '; an ' : ''}${r} ${ROLE_HELP[r]}`).join('')}. The last enabled account admin cannot be disabled or made a
          member.
        </p>
      </section>
      <ConfirmDialog
        open={disabling !== null}
        title={`Disable ${disabling?.email ?? ''}?`}
        confirmLabel="Disable account"
        onConfirm={async () => {
          if (disabling === null) return;
          await api.patch<User>(`/v1/users/${disabling.id}`, { disabled: true });
          notify(`${disabling.email} is disabled and signed out everywhere.`);
          accounts.reload();
        }}
        onClose={() => setDisabling(null)}
      >
        <p>They are signed out everywhere at once and cannot sign in until an account admin enables the account again. Their projects, keys and records stay.</p>
      </ConfirmDialog>
      <ResetPasswordDialog user={resetting} onClose={() => setResetting(null)} />
      <PasswordDialog open={changingOwn} email={me.email} onClose={() => setChangingOwn(false)} />
    </>
  );
}

function CreateAccountForm({ onCreated }: { onCreated: (user: User) => void }) {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<AccountRole>('member');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = useFieldErrors({ email: 'email', password: 'password', role: 'role' });

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    fields.reset();
    setBusy(true);
    try {
      const user = await api.post<User>('/v1/users', { email: email.trim(), password, role });
      setEmail('');
      setPassword('');
      setRole('member');
      onCreated(user);
    } catch (err) {
      if (!fields.fromApi(err)) setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="create-account-heading">
      <h2 id="create-account-heading">Create an account</h2>
      <ErrorBanner error={error} action="Creating the account failed" />
      <form class="form-row" onSubmit={submit} noValidate>
        <TextField
          id="new-account-email"
          label="Email"
          type="email"
          autocomplete="off"
          required
          value={email}
          onInput={(v) => {
            setEmail(v);
            fields.clear('email');
          }}
          error={fields.errors.email}
        />
        <TextField
          id="new-account-password"
          label="First password"
          type="password"
          autocomplete="new-password"
          required
          value={password}
          onInput={(v) => {
            setPassword(v);
            fields.clear('password');
          }}
          error={fields.errors.password}
          hint={PASSWORD_POLICY}
        />
        <div class="field">
          <label for="new-account-role">Account role</label>
          <select id="new-account-role" value={role} onChange={(e) => setRole(e.currentTarget.value as AccountRole)} aria-describedby="new-account-role-hint">
            {ACCOUNT_ROLES.map((r) => (
              <option value={r} key={r}>
                {r}
              </option>
            ))}
          </select>
          <p id="new-account-role-hint" class="hint">
            A {role} {ROLE_HELP[role]}.
          </p>
          <FieldProblem id="new-account-role-problem" message={fields.errors.role} />
        </div>
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Creating…' : 'Create account'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** An admin sets someone's password (they forgot it); every session of that account ends. */
function ResetPasswordDialog({ user, onClose }: { user: User | null; onClose: () => void }) {
  return (
    <Dialog open={user !== null} title={`New password for ${user?.email ?? ''}`} onClose={onClose}>
      {user !== null && <ResetPasswordForm user={user} onDone={onClose} />}
    </Dialog>
  );
}

function ResetPasswordForm({ user, onDone }: { user: User; onDone: () => void }) {
  const api = useApi();
  const notify = useToasts();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = useFieldErrors({ new_password: 'password' });

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    setBusy(true);
    try {
      await api.post<void>(`/v1/users/${user.id}/password`, { new_password: password });
      notify(`New password set for ${user.email}; their sessions were ended.`);
      onDone();
    } catch (err) {
      setBusy(false);
      if (!fields.fromApi(err)) setError(err);
    }
  };

  return (
    <form class="stack" onSubmit={submit} noValidate>
      <p>Every session of this account ends. Give them the new password by a channel you trust, and ask them to change it.</p>
      <ErrorBanner error={error} action="Setting the password failed" />
      <TextField
        id="reset-password"
        label="New password"
        type="password"
        autocomplete="new-password"
        required
        autofocus
        value={password}
        onInput={(v) => {
          setPassword(v);
          fields.clear('password');
        }}
        error={fields.errors.password}
        hint={PASSWORD_POLICY}
      />
      <div class="dialog-actions">
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
          {busy ? 'Saving…' : 'Set password'}
        </button>
      </div>
    </form>
  );
}
