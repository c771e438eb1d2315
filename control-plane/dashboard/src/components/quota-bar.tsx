import type { Project } from '../api/types.js';
import { quotaUse } from '../lib/format.js';

/**
 * A project's quota use: the bar is decoration for the eye, the sentence beside it carries the
 * figures (and "quota exhausted" in words, not only in red).
 */
export function QuotaBar({ project }: { project: Pick<Project, 'quota_tokens' | 'used_tokens' | 'quota_period'> }) {
  const use = quotaUse(project);
  return (
    <div class={`quota quota-${use.level}`}>
      <div class="quota-track" aria-hidden="true">
        {use.fraction !== null && <div class="quota-fill" style={{ width: `${(use.fraction * 100).toFixed(1)}%` }} />}
      </div>
      <p class="quota-label">
        <span class="visually-hidden">Quota use: </span>
        {use.level === 'exhausted' && <span aria-hidden="true">⚠ </span>}
        {use.label}
      </p>
    </div>
  );
}
