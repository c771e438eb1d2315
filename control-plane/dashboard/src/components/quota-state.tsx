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
