import { useState } from 'preact/hooks';
import type { Budget, BudgetInput, List } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { useToasts } from '../components/toasts.js';
import { formatCost, formatDateTime } from '../lib/format.js';
import { useAsync } from '../lib/use-async.js';

/**
 * A project's spending budgets on its card (docs/budgets.md): how much of each period is spent,
 * when it resets, and — for project admins and owners — a form to add one, a field to change a
 * limit, and delete. The figures are what the proxies enforce with, read when the card opens.
 */
export function ProjectBudgets({ projectId, projectName, canEdit }: { projectId: string; projectName: string; canEdit: boolean }) {
  const api = useApi();
  const notify = useToasts();
  const budgets = useAsync(() => api.get<List<Budget>>(`/v1/projects/${projectId}/budgets`).then((list) => list.data), [projectId]);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const [adding, setAdding] = useState(false);

  return (
    <section class="project-budgets" aria-label={`Budgets of ${projectName}`}>
      <h4>Budgets</h4>
      {budgets.error !== null && <ErrorBanner error={budgets.error} />}
      {budgets.data !== undefined && budgets.data.length === 0 && <p class="small muted">No spending budget.</p>}
      {budgets.data !== undefined && budgets.data.length > 0 && (
        <ul class="budget-list">
          {budgets.data.map((budget) => (
            <BudgetRow key={budget.id} budget={budget} canEdit={canEdit} onChanged={budgets.reload} onDelete={() => setDeleting(budget)} />
          ))}
        </ul>
      )}
      {canEdit && !adding && (
        <button type="button" class="button-quiet" onClick={() => setAdding(true)}>
          Add a budget<span class="visually-hidden"> to {projectName}</span>
        </button>
      )}
      {canEdit && adding && (
        <NewBudgetForm
          projectId={projectId}
          onDone={(made) => {
            setAdding(false);
            if (made) {
              notify('Budget added; every proxy enforces it within seconds.');
              budgets.reload();
            }
          }}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this budget?"
        confirmLabel="Delete budget"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api.delete(`/v1/projects/${projectId}/budgets/${deleting.id}`);
          notify('Budget deleted.');
          budgets.reload();
        }}
      >
        <p>Requests stop counting against it at once. Its spend stays in the usage records.</p>
      </ConfirmDialog>
    </section>
  );
}

function scopeOf(budget: Budget): string {
  if (budget.scope === 'key') return `key ${budget.key_id?.slice(0, 8)}…`;
  if (budget.scope === 'tag') return `tag ${budget.tag}`;
  return 'whole project';
}

function periodOf(budget: Budget): string {
  if (budget.period === 'total') return 'in total';
  if (budget.period === 'day' || budget.period === 'week' || budget.period === 'month') return `per ${budget.period} (${budget.timezone})`;
  return `per ${budget.period} window`;
}

function BudgetRow({ budget, canEdit, onChanged, onDelete }: { budget: Budget; canEdit: boolean; onChanged: () => void; onDelete: () => void }) {
  const api = useApi();
  const [limit, setLimit] = useState(String(budget.limit_usd));
  const [error, setError] = useState<unknown>(null);
  const fraction = budget.limit_usd === 0 ? 1 : Math.min(1, budget.spent_usd / budget.limit_usd);
  const level = fraction >= 1 ? 'exhausted' : fraction >= 0.8 ? 'high' : 'ok';
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await api.patch(`/v1/projects/${budget.project_id}/budgets/${budget.id}`, { limit_usd: Number(limit) });
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <li class={`budget quota quota-${level}`}>
      <p class="budget-title">
        <strong>{formatCost(budget.limit_usd)}</strong> {periodOf(budget)} · {scopeOf(budget)}
      </p>
      <div class="quota-track" aria-hidden="true">
        <div class="quota-fill" style={{ width: `${(fraction * 100).toFixed(1)}%` }} />
      </div>
      <p class="quota-label">
        {/* The state in words and an icon beside the colour, as the quota's. */}
        {level === 'high' && (
          <>
            <span aria-hidden="true">⚠</span> Near budget ({Math.floor(fraction * 100)}%) ·{' '}
          </>
        )}
        {level === 'exhausted' && (
          <>
            <span aria-hidden="true">✕</span> Budget reached ·{' '}
          </>
        )}
        {formatCost(budget.spent_usd)} spent of {formatCost(budget.limit_usd)}
        {budget.reserved_usd > 0 && <> ({formatCost(budget.reserved_usd)} reserved)</>}
        {' · '}
        {budget.resets_at === null ? 'never resets' : `resets ${formatDateTime(budget.resets_at)}`}
      </p>
      {canEdit && (
        <form class="budget-edit" onSubmit={save}>
          <label>
            Limit (US$)
            <input type="number" min="0" step="0.01" value={limit} onInput={(e) => setLimit((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">Save</button>
          <button type="button" class="button-danger-quiet" onClick={onDelete}>
            Delete
          </button>
          {error !== null && <ErrorBanner error={error} />}
        </form>
      )}
    </li>
  );
}

function NewBudgetForm({ projectId, onDone }: { projectId: string; onDone: (made: boolean) => void }) {
  const api = useApi();
  const [form, setForm] = useState({ scope: 'project', target: '', limit: '', period: 'month', timezone: 'UTC', alerts: '0.8, 1' });
  const [error, setError] = useState<unknown>(null);
  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value });
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const alerts = form.alerts.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
    const body: BudgetInput = {
      scope: form.scope as BudgetInput['scope'],
      limit_usd: Number(form.limit),
      period: form.period,
      timezone: form.timezone,
      alert_at: alerts,
      ...(form.scope === 'key' ? { key_id: form.target } : {}),
      ...(form.scope === 'tag' ? { tag: form.target } : {}),
    };
    try {
      await api.post(`/v1/projects/${projectId}/budgets`, body);
      onDone(true);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="budget-new" onSubmit={submit}>
      <label>
        Counts
        <select value={form.scope} onChange={set('scope')}>
          <option value="project">the whole project</option>
          <option value="key">one key (id)</option>
          <option value="tag">one tag (name=value)</option>
        </select>
      </label>
      {form.scope !== 'project' && (
        <label>
          {form.scope === 'key' ? 'Key id' : 'Tag'}
          <input required value={form.target} onInput={set('target')} placeholder={form.scope === 'key' ? '' : 'team=search'} />
        </label>
      )}
      <label>
        Limit (US$)
        <input required type="number" min="0" step="0.01" value={form.limit} onInput={set('limit')} />
      </label>
      <label>
        Period
        <input required value={form.period} onInput={set('period')} list="budget-periods" />
        <datalist id="budget-periods">
          <option value="day" />
          <option value="week" />
          <option value="month" />
          <option value="total" />
          <option value="6h" />
        </datalist>
      </label>
      <label>
        Time zone
        <input value={form.timezone} onInput={set('timezone')} />
      </label>
      <label>
        Alert at (fractions)
        <input value={form.alerts} onInput={set('alerts')} />
      </label>
      <button type="submit">Add budget</button>
      <button type="button" class="button-quiet" onClick={() => onDone(false)}>
        Cancel
      </button>
      {error !== null && <ErrorBanner error={error} />}
    </form>
  );
}
