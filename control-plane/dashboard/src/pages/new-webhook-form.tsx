import { useState } from 'preact/hooks';
import { WEBHOOK_EVENT_TYPES, type NewWebhook, type WebhookEventType } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FieldProblem, useFieldErrors } from '../components/field.js';
import { fieldErrorFrom } from '../lib/field-errors.js';

/** What each event means, beside its checkbox (docs/webhooks.md#events). */
export const EVENT_HELP: Record<WebhookEventType, string> = {
  'key.created': 'an API key was created',
  'key.deleted': 'an API key was deleted',
  'project.updated': 'the project was renamed, or its quota, limits or models changed',
  'quota.threshold': 'usage reached 80 % or 100 % of the quota',
  'budget.threshold': 'spend reached one of a budget\'s alert_at fractions (once per period)',
  'gateway.request.failed': 'gateway requests failed (batched: at most one event every 10 s)',
  'guardrail.blocked': 'a guardrail blocked prompts or withheld answers (batched like failed requests)',
};

type Problems = Partial<Record<'url' | 'events' | 'secret', string>>;
/** The API's `param` for a refused value is the body's field name, the same as the form's. */
const FORM_FIELDS = { url: 'url', events: 'events', secret: 'secret' };

/**
 * Checks that spare a round trip; the API has the last word (private addresses, credentials in
 * the URL, the secret's length), and its refusal is shown on the field it names.
 */
function problemsOf(url: string, events: readonly WebhookEventType[], secret: string): Problems {
  const problems: Problems = {};
  let parsed: URL | null = null;
  try {
    parsed = new URL(url.trim());
  } catch {
    parsed = null;
  }
  if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    problems.url = 'Enter a full http or https address, e.g. https://hooks.example.com/gateway.';
  }
  if (events.length === 0) problems.events = 'Choose at least one event.';
  if (secret.trim() !== '' && !secret.trim().startsWith('whsec_')) problems.secret = 'A secret of your own starts with whsec_; or leave it empty.';
  return problems;
}

function focusFirst(found: Problems): void {
  const first = found.url ? 'new-webhook-url' : found.events ? `new-webhook-event-${WEBHOOK_EVENT_TYPES[0]}` : 'new-webhook-secret';
  document.getElementById(first)?.focus();
}

export function NewWebhookForm({ projectId, onCreated }: { projectId: string; onCreated: (webhook: NewWebhook) => void }) {
  const api = useApi();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([]);
  const [secret, setSecret] = useState('');
  const fields = useFieldErrors(FORM_FIELDS);
  const problems: Problems = fields.errors;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const toggle = (type: WebhookEventType, on: boolean) => {
    setEvents((current) => WEBHOOK_EVENT_TYPES.filter((t) => (t === type ? on : current.includes(t))));
    fields.clear('events');
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const found = problemsOf(url, events, secret);
    fields.reset();
    for (const [field, message] of Object.entries(found)) fields.set(field, message);
    if (Object.keys(found).length > 0) {
      focusFirst(found);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const own = secret.trim();
      const created = await api.post<NewWebhook>(`/v1/projects/${projectId}/webhooks`, { url: url.trim(), events, ...(own === '' ? {} : { secret: own }) });
      setUrl('');
      setEvents([]);
      setSecret('');
      onCreated(created);
    } catch (err) {
      if (fields.fromApi(err)) {
        const placed = fieldErrorFrom(err, FORM_FIELDS);
        if (placed !== null) focusFirst({ [placed.field]: placed.message });
      } else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="new-webhook-heading">
      <h2 id="new-webhook-heading">Add a webhook</h2>
      <ErrorBanner error={error} action="Creating the webhook failed" />
      <form onSubmit={submit} noValidate class="stack">
        <div class="field">
          <label for="new-webhook-url">Endpoint URL</label>
          <input
            id="new-webhook-url"
            type="url"
            inputMode="url"
            required
            maxLength={2048}
            value={url}
            onInput={(e) => {
              setUrl(e.currentTarget.value);
              fields.clear('url');
            }}
            aria-invalid={problems.url !== undefined ? true : undefined}
            aria-describedby={problems.url ? 'new-webhook-url-hint new-webhook-url-problem' : 'new-webhook-url-hint'}
            autocomplete="off"
            spellcheck={false}
          />
          <p id="new-webhook-url-hint" class="hint">
            Where the gateway POSTs the events: a public http or https address, without user:password.
          </p>
          {problems.url && <FieldProblem id="new-webhook-url-problem" message={problems.url} />}
        </div>

        <fieldset class="event-choices" aria-describedby={problems.events ? 'new-webhook-events-problem' : undefined}>
          <legend>Events to send</legend>
          <ul>
            {WEBHOOK_EVENT_TYPES.map((type) => (
              <li key={type}>
                <input
                  type="checkbox"
                  id={`new-webhook-event-${type}`}
                  checked={events.includes(type)}
                  onChange={(e) => toggle(type, e.currentTarget.checked)}
                  aria-describedby={`new-webhook-event-${type}-help`}
                />
                <label for={`new-webhook-event-${type}`}>
                  <code>{type}</code>
                </label>
                <span id={`new-webhook-event-${type}-help`} class="hint">
                  {EVENT_HELP[type]}
                </span>
              </li>
            ))}
          </ul>
          {problems.events && <FieldProblem id="new-webhook-events-problem" message={problems.events} />}
        </fieldset>

        <div class="field">
          <label for="new-webhook-secret">
            Signing secret <span class="muted">(optional)</span>
          </label>
          <input
            id="new-webhook-secret"
            class="mono"
            maxLength={200}
            value={secret}
            onInput={(e) => {
              setSecret(e.currentTarget.value);
              fields.clear('secret');
            }}
            aria-invalid={problems.secret !== undefined ? true : undefined}
            aria-describedby={problems.secret ? 'new-webhook-secret-hint new-webhook-secret-problem' : 'new-webhook-secret-hint'}
            autocomplete="off"
            spellcheck={false}
            data-secret="webhook-secret"
          />
          <p id="new-webhook-secret-hint" class="hint">
            Leave empty and the gateway generates one. Your own (the same on several gateways, say) is <code>whsec_</code> followed by the base64 of 24 to
            64 random bytes: <code>echo "whsec_$(openssl rand -base64 32)"</code>. Either way it is shown once, right after creation.
          </p>
          {problems.secret && <FieldProblem id="new-webhook-secret-problem" message={problems.secret} />}
        </div>

        <div class="form-actions">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Creating…' : 'Create webhook'}
          </button>
        </div>
      </form>
    </section>
  );
}
