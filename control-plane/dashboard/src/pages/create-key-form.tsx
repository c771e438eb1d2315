import { useState } from 'preact/hooks';
import type { NewApiKey } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { describedBy, FieldProblem } from '../components/field.js';
import { formatDateTime } from '../lib/format.js';
import { EXPIRY_CHOICES, expiryFrom, localDateInput, type ExpiryChoice } from '../lib/key-expiry.js';

/**
 * A new key: a name and when it stops working. 90 days is preselected: a key that expires is a
 * key that gets rotated, and the keys table says in time when one is about to.
 */
export function CreateKeyForm({ projectId, onCreated }: { projectId: string; onCreated: (key: NewApiKey) => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState<ExpiryChoice>('90');
  const [date, setDate] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const now = new Date();
  const preview = expiryFrom(expiry, date, now);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const expires = expiryFrom(expiry, date, new Date());
    if (!expires.ok) return setProblem(expires.problem);
    setProblem(null);
    setBusy(true);
    setError(null);
    try {
      const key = await api.post<NewApiKey>(`/v1/projects/${projectId}/keys`, { name: name.trim(), expires_at: expires.value });
      setName('');
      onCreated(key);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Create a key</h2>
      <ErrorBanner error={error} action="Creating the key failed" />
      <form class="form-row" onSubmit={submit}>
        <div class="field">
          <label for="new-key-name">Key name</label>
          <input
            id="new-key-name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            aria-describedby="new-key-name-hint"
          />
          <p id="new-key-name-hint" class="hint">
            Where it will be used, e.g. “billing-service prod”. The secret is shown once, right after creation.
          </p>
        </div>
        <div class="field">
          <label for="new-key-expiry">Expires</label>
          <select id="new-key-expiry" value={expiry} onChange={(e) => (setExpiry(e.currentTarget.value as ExpiryChoice), setProblem(null))} aria-describedby="new-key-expiry-hint">
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
          <p id="new-key-expiry-hint" class="hint">
            {expiry === 'never' ? 'The key works until it is deleted.' : preview.ok && preview.value !== null ? `Stops working at ${formatDateTime(preview.value)}.` : 'The key works through the day you pick.'}
          </p>
        </div>
        {expiry === 'custom' && (
          <div class="field">
            <label for="new-key-expiry-date">Last day</label>
            <input
              id="new-key-expiry-date"
              type="date"
              min={localDateInput(now)}
              value={date}
              onInput={(e) => (setDate(e.currentTarget.value), setProblem(null))}
              aria-invalid={problem !== null}
              aria-describedby={describedBy(null, 'new-key-expiry-problem', problem)}
            />
            <FieldProblem id="new-key-expiry-problem" message={problem} />
          </div>
        )}
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
    </section>
  );
}
