import { FINISH_REASONS, type FinishReason, type ApiKey } from '../api/types.js';
import { FiltersToggle } from '../components/filters-toggle.js';
import { RangeFields } from '../components/range-fields.js';
import { activeFilterCount, type UsageView } from '../lib/usage-view.js';
import { useState } from 'preact/hooks';

/**
 * The usage filters. Models and providers are offered from what the range holds (the summary
 * grouped by each), keys from the project's keys list; a value the address names but the range
 * does not hold stays selectable, so a shared link never silently loses a filter.
 */
export interface FilterChoices {
  models: string[];
  providers: string[];
  keys: ApiKey[];
}

function withCurrent(values: readonly string[], current: string): string[] {
  return current === '' || values.includes(current) ? [...values] : [current, ...values];
}

export function UsageFiltersForm({
  draft,
  onDraft,
  onApply,
  onReset,
  onRefresh,
  choices,
  projectChosen,
  problem,
}: {
  draft: UsageView;
  onDraft: (view: UsageView) => void;
  onApply: () => void;
  onReset: () => void;
  onRefresh: () => void;
  choices: FilterChoices;
  projectChosen: boolean;
  problem: string | null;
}) {
  const [open, setOpen] = useState(false);
  const models = withCurrent(choices.models, draft.model);
  const providers = withCurrent(choices.providers, draft.provider);
  return (
    <>
      <FiltersToggle open={open} onToggle={() => setOpen(!open)} controls="usage-filters" active={activeFilterCount(draft)} />
      <form
        id="usage-filters"
        class={`panel filters filters-collapsible${open ? ' is-open' : ''}`}
        onSubmit={(e) => {
          e.preventDefault();
          onApply();
        }}
        aria-labelledby="usage-filters-heading"
      >
        <h2 id="usage-filters-heading" class="visually-hidden">
          Filters
        </h2>
        <RangeFields idPrefix="usage" value={draft.range} onChange={(range) => onDraft({ ...draft, range })} />
        <div class="filter-grid filter-grid-spaced">
          <div class="field">
            <label for="usage-model">Model</label>
            <select id="usage-model" value={draft.model} onChange={(e) => onDraft({ ...draft, model: e.currentTarget.value })}>
              <option value="">Any model</option>
              {models.map((m) => (
                <option value={m} key={m}>
                  {m}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="usage-provider">Provider</label>
            <select id="usage-provider" value={draft.provider} onChange={(e) => onDraft({ ...draft, provider: e.currentTarget.value })}>
              <option value="">Any provider</option>
              {providers.map((p) => (
                <option value={p} key={p}>
                  {p}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="usage-finish">Finish reason</label>
            <select id="usage-finish" value={draft.finish_reason} onChange={(e) => onDraft({ ...draft, finish_reason: e.currentTarget.value as FinishReason | '' })}>
              <option value="">Any</option>
              {FINISH_REASONS.map((r) => (
                <option value={r} key={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="usage-tag">Tag</label>
            <input id="usage-tag" value={draft.tag} placeholder="team=search" maxLength={100} onInput={(e) => onDraft({ ...draft, tag: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="usage-end-user">End user</label>
            <input id="usage-end-user" value={draft.end_user} maxLength={128} onInput={(e) => onDraft({ ...draft, end_user: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="usage-key">Key</label>
            <select
              id="usage-key"
              value={draft.key_id}
              onChange={(e) => onDraft({ ...draft, key_id: e.currentTarget.value })}
              disabled={!projectChosen}
              aria-describedby={projectChosen ? undefined : 'usage-key-hint'}
            >
              <option value="">Any key</option>
              {draft.key_id !== '' && !choices.keys.some((k) => k.id === draft.key_id) && <option value={draft.key_id}>{draft.key_id.slice(0, 8)}… (deleted or unknown)</option>}
              {choices.keys.map((k) => (
                <option value={k.id} key={k.id}>
                  {k.name} ({k.prefix}…)
                </option>
              ))}
            </select>
            {!projectChosen && (
              <p id="usage-key-hint" class="hint">
                Choose a project to filter by key.
              </p>
            )}
          </div>
        </div>
        {problem && (
          <p class="field-problem" role="alert">
            <span aria-hidden="true">⚠ </span>
            {problem}
          </p>
        )}
        <div class="form-actions">
          <button type="submit" class="button-primary">
            Apply filters
          </button>
          <button type="button" onClick={onReset}>
            Reset filters
          </button>
          <button type="button" onClick={onRefresh}>
            Refresh
          </button>
        </div>
      </form>
    </>
  );
}
