import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/api-error.js';
import type { Project, ServedModel } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { Dialog } from '../components/dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { describedBy, FieldProblem } from '../components/field.js';
import { formatNumber } from '../lib/format.js';
import { allowListState } from '../lib/project-list.js';
import { fieldOfParam, formFromProject, settingsPatch, type SettingsForm, type SettingsProblems } from '../lib/project-settings.js';

/**
 * Every setting of a project in one form: name, quota and its period, the four rate limits, the
 * model allow-list (picked from the models the gateway serves), the max_tokens cap and the MCP
 * servers and tools its keys may use (docs/mcp.md), the response cache (docs/caching.md), model
 * aliases, what a translation does with a parameter it cannot carry, and how long stored responses
 * are kept (docs/endpoints.md). Only what
 * changed is sent. Taking the quota away asks first, because the project then has no ceiling.
 */
export function ProjectSettingsDialog({
  project,
  served,
  servedError,
  onClose,
  onSaved,
}: {
  project: Project | null;
  served: ServedModel[] | undefined;
  /** Why the served models could not be read; the allow-list is then edited as it stands. */
  servedError?: unknown;
  onClose: () => void;
  onSaved: (project: Project) => void;
}) {
  const api = useApi();
  const [form, setForm] = useState<SettingsForm | null>(null);
  const [shownFor, setShownFor] = useState<string | null>(null);
  const [problems, setProblems] = useState<SettingsProblems>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [askUnlimited, setAskUnlimited] = useState(false);
  const keepQuota = useRef<HTMLButtonElement>(null);
  // The question takes focus, on its safe answer, so an Enter out of habit changes nothing.
  useEffect(() => {
    if (askUnlimited) keepQuota.current?.focus();
  }, [askUnlimited]);

  // Start from the project's current settings each time the dialog opens for one.
  if (project !== null && shownFor !== project.id) {
    setShownFor(project.id);
    setForm(formFromProject(project));
    setProblems({});
    setError(null);
    setAskUnlimited(false);
  }

  const close = () => {
    setShownFor(null);
    onClose();
  };

  const set = <K extends keyof SettingsForm>(field: K, value: SettingsForm[K]) => {
    setForm((f) => (f === null ? f : { ...f, [field]: value }));
    setAskUnlimited(false);
    // A field being corrected no longer shows the old problem; Save checks it again.
    const named = field === 'modelsMode' ? 'models' : field;
    setProblems((p) => {
      if (!(named in p)) return p;
      const { [named as keyof SettingsProblems]: _gone, ...rest } = p;
      return rest;
    });
  };

  const save = async (confirmedUnlimited: boolean) => {
    if (busy || project === null || form === null) return;
    const result = settingsPatch(project, form);
    if (!result.ok) {
      setProblems(result.problems);
      return;
    }
    setProblems({});
    if (result.value.clearsQuota && !confirmedUnlimited) {
      setAskUnlimited(true);
      return;
    }
    setAskUnlimited(false);
    if (Object.keys(result.value.patch).length === 0) {
      close();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const saved = await api.patch<Project>(`/v1/projects/${project.id}`, result.value.patch);
      onSaved(saved);
      close();
    } catch (err) {
      const field = err instanceof ApiError ? fieldOfParam(err.param) : null;
      if (field !== null && err instanceof ApiError) setProblems({ [field]: err.message });
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void save(false);
  };

  const servedIds = served?.map((m) => m.id) ?? [];
  // Models the list names that no provider serves stay offered, so they can be seen and removed.
  const offered = form === null ? servedIds : [...servedIds, ...form.models.filter((m) => !servedIds.includes(m))];
  const chosen = form === null ? null : allowListState(form.modelsMode === 'all' ? null : form.models, served);

  return (
    <Dialog open={project !== null} title={`Settings of “${project?.name ?? ''}”`} onClose={close}>
      {form !== null && project !== null && (
        <form onSubmit={submit} class="settings-form" noValidate>
          <ErrorBanner error={error} action="Saving the settings failed" />
          <NumberField id="settings-name" label="Name" value={form.name} onInput={(v) => set('name', v)} problem={problems.name} text autofocus />

          <fieldset class="settings-group">
            <legend>Token quota</legend>
            <p class="hint">Used so far: {formatNumber(project.used_tokens)} tokens. Requests are refused with 429 once the quota is used up.</p>
            <div class="settings-pair">
              <NumberField id="settings-quota" label="Tokens" hint="Empty: no quota." value={form.quota} onInput={(v) => set('quota', v)} problem={problems.quota} />
              <div class="field">
                <label for="settings-period">Counted</label>
                <select id="settings-period" value={form.period} onChange={(e) => set('period', e.currentTarget.value as SettingsForm['period'])}>
                  <option value="total">in total</option>
                  <option value="month">each month (UTC)</option>
                </select>
              </div>
            </div>
          </fieldset>

          <fieldset class="settings-group">
            <legend>Rate limits per minute</legend>
            <p class="hint">Empty: no limit. Tokens count the prompt estimate plus max_tokens. Shared by every gateway replica.</p>
            <div class="settings-pair">
              <NumberField id="settings-key-rpm" label="Requests per key" value={form.key_rpm} onInput={(v) => set('key_rpm', v)} problem={problems.key_rpm} />
              <NumberField id="settings-key-tpm" label="Tokens per key" value={form.key_tpm} onInput={(v) => set('key_tpm', v)} problem={problems.key_tpm} />
              <NumberField id="settings-project-rpm" label="Requests per project" value={form.project_rpm} onInput={(v) => set('project_rpm', v)} problem={problems.project_rpm} />
              <NumberField id="settings-project-tpm" label="Tokens per project" value={form.project_tpm} onInput={(v) => set('project_tpm', v)} problem={problems.project_tpm} />
            </div>
          </fieldset>

          <fieldset class="settings-group" aria-describedby="settings-models-hint">
            <legend>Models</legend>
            <p id="settings-models-hint" class="hint">
              Requests for any other model are refused with 403.
            </p>
            <label class="settings-choice">
              <input type="radio" name="settings-models-mode" checked={form.modelsMode === 'all'} onChange={() => set('modelsMode', 'all')} />
              Every model the gateway serves, now and later
            </label>
            <label class="settings-choice">
              <input type="radio" name="settings-models-mode" checked={form.modelsMode === 'some'} onChange={() => set('modelsMode', 'some')} />
              Only the models ticked below
            </label>
            <ErrorBanner error={served === undefined ? servedError : null} action="Loading the gateway's models failed" />
            {form.modelsMode === 'some' && (
              <ul class="model-choices" aria-label="Allowed models">
                {offered.length === 0 && <li class="muted">The gateway lists no models.</li>}
                {offered.map((id) => {
                  const model = served?.find((m) => m.id === id);
                  return (
                    <li key={id}>
                      <label class="settings-choice">
                        <input
                          type="checkbox"
                          checked={form.models.includes(id)}
                          onChange={(e) => set('models', e.currentTarget.checked ? [...form.models, id] : form.models.filter((m) => m !== id))}
                        />
                        <code>{id}</code>
                        <span class="muted small">{model ? `via ${model.providers.join(', ')}` : '— not served by this gateway'}</span>
                      </label>
                    </li>
                  );
                })}
              </ul>
            )}
            {chosen?.kind === 'none' && (
              <p class="project-warning" role="alert">
                <span aria-hidden="true">⊘ </span>
                <strong>No model allowed:</strong> with this list every request of the project is refused.
              </p>
            )}
            <FieldProblem id="settings-models-problem" message={problems.models} />
          </fieldset>

          <NumberField
            id="settings-cap"
            label="Max tokens per request"
            hint="Empty: no cap. Larger max_tokens are refused; requests without one get this one."
            value={form.max_tokens_cap}
            onInput={(v) => set('max_tokens_cap', v)}
            problem={problems.max_tokens_cap}
          />

          <div class="field">
            <label for="settings-mcp">MCP servers and tools</label>
            <textarea
              id="settings-mcp"
              rows={3}
              maxLength={20_000}
              spellcheck={false}
              placeholder={'docs: *; prompts: summary; resources: docs://public/*\ntickets: search, get_ticket'}
              value={form.mcp}
              onInput={(e) => set('mcp', e.currentTarget.value)}
              aria-invalid={problems.mcp !== undefined}
              aria-describedby={describedBy('settings-mcp-hint', 'settings-mcp-problem', problems.mcp)}
            />
            <p id="settings-mcp-hint" class="hint">
              One server per line, with * or the tools its keys may call on /mcp, then “; prompts: …” and “; resources: …” if they may use those
              (none unless named; a URI ending in * is a prefix). Empty: no MCP for this project.
            </p>
            <FieldProblem id="settings-mcp-problem" message={problems.mcp} />
          </div>

          <div class="field">
            <label for="settings-cache">Response cache</label>
            <select id="settings-cache" value={form.cacheMode} onChange={(e) => set('cacheMode', e.currentTarget.value as SettingsForm['cacheMode'])} aria-describedby="settings-cache-hint">
              <option value="off">Off</option>
              <option value="exact">Exact: replay the answer to an identical request</option>
            </select>
            <p id="settings-cache-hint" class="hint">
              Identical requests are answered from Redis without calling the provider, billed nothing (docs/caching.md).
            </p>
          </div>

          <NumberField
            id="settings-cache-ttl"
            label="Cached answers are served for (seconds)"
            hint="1 to 2,592,000 (30 days); 3600 is an hour."
            value={form.cacheTtl}
            onInput={(v) => set('cacheTtl', v)}
            problem={problems.cacheTtl}
          />

          <fieldset class="settings-group">
            <legend>Translation and stored responses</legend>
            <div class="field">
              <label for="settings-aliases">Model aliases</label>
              <textarea
                id="settings-aliases"
                rows={3}
                maxLength={600_000}
                spellcheck={false}
                placeholder={'claude-sonnet-4-5 = claude-haiku-4-5\ngpt-5 = gpt-5-mini'}
                value={form.aliases}
                onInput={(e) => set('aliases', e.currentTarget.value)}
                aria-invalid={problems.aliases !== undefined}
                aria-describedby={describedBy('settings-aliases-hint', 'settings-aliases-problem', problems.aliases)}
              />
              <p id="settings-aliases-hint" class="hint">
                One per line: the model a client asks for, “=”, the model it is served. Records keep both. Empty: none.
              </p>
              <FieldProblem id="settings-aliases-problem" message={problems.aliases} />
            </div>
            <div class="field">
              <label for="settings-unsupported">Parameters a translation cannot carry</label>
              <select
                id="settings-unsupported"
                value={form.unsupportedParams}
                onChange={(e) => set('unsupportedParams', e.currentTarget.value as SettingsForm['unsupportedParams'])}
                aria-describedby="settings-unsupported-hint"
              >
                <option value="drop">Drop them, and name them</option>
                <option value="refuse">Refuse the request</option>
              </select>
              <p id="settings-unsupported-hint" class="hint">
                For a request sent to a provider of another protocol, a parameter that only tunes the answer: dropped and named in x-gateway-dropped-params, or refused with 400 UNSUPPORTED_PARAMETER. One that would change the answer is always refused.
              </p>
            </div>
            <NumberField
              id="settings-responses-ttl"
              label="Stored responses are kept for (days)"
              hint="1 to 3,650; for previous_response_id and GET /v1/responses/{id}. Requests with store: false keep nothing."
              value={form.responsesTtl}
              onInput={(v) => set('responsesTtl', v)}
              problem={problems.responsesTtl}
            />
          </fieldset>

          {askUnlimited ? (
            <div class="banner banner-warning unlimited-question" role="alert">
              <span class="banner-icon" aria-hidden="true">
                ⚠
              </span>
              <div>
                <p id="unlimited-title">
                  <strong>Make “{project.name}” unlimited?</strong>
                </p>
                <p id="unlimited-text">Without a quota its keys can spend any number of tokens; only the rate limits remain.</p>
                <div class="dialog-actions">
                  <button type="button" ref={keepQuota} onClick={() => setAskUnlimited(false)}>
                    Keep the quota
                  </button>
                  <button type="button" class="button-danger" onClick={() => void save(true)} aria-disabled={busy}>
                    Make unlimited
                  </button>
                </div>
              </div>
            </div>
          ) : (
            <div class="dialog-actions">
              <button type="button" onClick={close}>
                Cancel
              </button>
              <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
                {busy ? 'Saving…' : 'Save settings'}
              </button>
            </div>
          )}
        </form>
      )}
    </Dialog>
  );
}

function NumberField({
  id,
  label,
  hint,
  value,
  onInput,
  problem,
  text,
  autofocus,
}: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  onInput: (value: string) => void;
  problem: string | undefined;
  text?: boolean;
  autofocus?: boolean;
}) {
  const hintId = hint ? `${id}-hint` : null;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        inputMode={text ? undefined : 'numeric'}
        maxLength={text ? 200 : 20}
        autofocus={autofocus}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-invalid={problem !== undefined}
        aria-describedby={describedBy(hintId, `${id}-problem`, problem)}
      />
      {hint && (
        <p id={hintId ?? undefined} class="hint">
          {hint}
        </p>
      )}
      <FieldProblem id={`${id}-problem`} message={problem} />
    </div>
  );
}

