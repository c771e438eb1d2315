import type { Project } from '../api/types.js';
import { quotaUse } from '../lib/format.js';

/**
 * A project's quota state once it matters: from 80 % "near quota", at 100 % "out of quota",
 * each with its own icon and words beside the colour. Nothing below 80 % or without a quota.
 */
export function QuotaState({ project }: { project: Pick<Project, 'quota_tokens' | 'used_tokens' | 'quota_period'> }) {
  const use = quotaUse(project);
  if (use.level === 'high') {
    const percent = Math.floor((use.fraction ?? 0) * 100);
    return (
      <span class="badge badge-quota-high">
        <span aria-hidden="true">⚠</span> Near quota ({percent}%)
      </span>
    );
  }
  if (use.level === 'exhausted') {
    return (
      <span class="badge badge-quota-exhausted">
        <span aria-hidden="true">✕</span> Out of quota
      </span>
    );
  }
  return null;
}

/**
 * The same state as a sentence for the pages of one project (its keys), where a key that works
 * today may be refused with 429 tomorrow: what is used, and what happens next.
 */
export function QuotaWarning({ project }: { project: Pick<Project, 'name' | 'quota_tokens' | 'used_tokens' | 'quota_period'> }) {
  const use = quotaUse(project);
  if (use.level !== 'high' && use.level !== 'exhausted') return null;
  const exhausted = use.level === 'exhausted';
  return (
    <p class={`quota-warning ${exhausted ? 'quota-warning-exhausted' : ''}`} role="status">
      <span aria-hidden="true">{exhausted ? '✕ ' : '⚠ '}</span>
      <strong>{exhausted ? `“${project.name}” is out of quota:` : `“${project.name}” is near its quota:`}</strong> {use.label}.{' '}
      {exhausted ? 'Every request with its keys is refused with 429 until the quota is raised' : 'Requests are refused with 429 once it is used up'}
      {project.quota_period === 'month' ? ' or the month ends.' : '.'}
    </p>
  );
}
