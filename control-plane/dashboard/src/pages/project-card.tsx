import type { Project, ServedModel } from '../api/types.js';
import { CacheFigures } from '../components/cache-figures.js';
import { CopyButton } from '../components/copy-button.js';
import { QuotaBar } from '../components/quota-bar.js';
import { QuotaState } from '../components/quota-state.js';
import { ProjectBudgets } from './project-budgets.js';
import { formatDateTime, formatNumber, quotaUse } from '../lib/format.js';
import { allowListState } from '../lib/project-list.js';
import { describeLimit } from '../lib/project-settings.js';
import { href, Link } from '../lib/router.js';
import { roleAtLeast, useProjectRole } from '../lib/use-project-role.js';

/**
 * One project with every setting it has, its id to copy, and what needs attention said in words:
 * a quota at 80 % or used up, an allow-list that lets no model through. Settings and Delete show
 * for the roles that may use them (admins and owners; owners), as the project's member list
 * says; when that list cannot be read they show, and the API's answer decides.
 */
export function ProjectCard({
  project,
  served,
  onSettings,
  onDelete,
}: {
  project: Project;
  served: ServedModel[] | undefined;
  onSettings: (project: Project) => void;
  onDelete: (project: Project) => void;
}) {
  const role = useProjectRole(project.id);
  const unknown = role.role === undefined;
  const canEdit = role.role === undefined ? role.error !== null : roleAtLeast(role.role, 'admin');
  const canDelete = role.role === undefined ? role.error !== null : roleAtLeast(role.role, 'owner');
  const models = allowListState(project.allowed_models, served);
  const level = quotaUse(project).level;
  const headingId = `project-${project.id}`;
  const limits = project.rate_limits;

  return (
    <article class={`card project-card project-quota-${level}${models.kind === 'none' ? ' project-blocked' : ''}`} aria-labelledby={headingId}>
      <div class="project-card-title">
        <h3 id={headingId}>{project.name}</h3>
        <QuotaState project={project} />
      </div>
      <QuotaBar project={project} />
      {models.kind === 'none' && (
        <p class="project-warning" role="note">
          <span aria-hidden="true">⊘ </span>
          <strong>No model allowed:</strong>{' '}
          {models.reason === 'empty' ? 'the allow-list is empty' : `the allow-list names only models this gateway does not serve (${models.unserved.join(', ')})`}, so
          every request is refused.
        </p>
      )}
      <dl class="project-settings">
        <div>
          <dt>Quota</dt>
          <dd>
            {project.quota_tokens === null
              ? 'unlimited'
              : `${formatNumber(project.quota_tokens)} tokens ${project.quota_period === 'month' ? 'per calendar month (UTC)' : 'in total'}`}
          </dd>
        </div>
        <div>
          <dt>Per key</dt>
          <dd>
            {describeLimit(limits?.key_rpm, 'requests')} · {describeLimit(limits?.key_tpm, 'tokens')}
          </dd>
        </div>
        <div>
          <dt>Per project</dt>
          <dd>
            {describeLimit(limits?.project_rpm, 'requests')} · {describeLimit(limits?.project_tpm, 'tokens')}
          </dd>
        </div>
        <div>
          <dt>Models</dt>
          <dd>
            {models.kind === 'all' && 'every model the gateway serves'}
            {models.kind === 'some' && (
              <>
                {models.served.join(', ')}
                {models.unserved.length > 0 && <span class="muted"> (not served here: {models.unserved.join(', ')})</span>}
              </>
            )}
            {models.kind === 'none' && (
              <>
                <span aria-hidden="true">⊘ </span>none
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Max tokens</dt>
          <dd>{project.max_tokens_cap === null || project.max_tokens_cap === undefined ? 'no cap' : `at most ${formatNumber(project.max_tokens_cap)} per request`}</dd>
        </div>
        <div>
          <dt>Response cache</dt>
          <dd>
            <CacheFigures project={project} />
          </dd>
        </div>
        <div>
          <dt>Translation</dt>
          <dd>{translationSummary(project)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDateTime(project.created_at)}</dd>
        </div>
        <div class="project-id">
          <dt>Project id</dt>
          <dd>
            <code>{project.id}</code>
            <CopyButton text={project.id} label={`Copy id`} class="copy-inline" />
          </dd>
        </div>
      </dl>
      <ProjectBudgets projectId={project.id} projectName={project.name} canEdit={canEdit} />
      <p class="card-links">
        <Link href={href('/keys', { project: project.id })}>
          Keys<span class="visually-hidden"> of {project.name}</span>
        </Link>
        <Link href={href('/usage', { project: project.id })}>
          Usage<span class="visually-hidden"> of {project.name}</span>
        </Link>
        <Link href={href('/audit', { project: project.id })}>
          Audit<span class="visually-hidden"> of {project.name}</span>
        </Link>
        <Link href={href('/members', { project: project.id })}>
          Members<span class="visually-hidden"> of {project.name}</span>
        </Link>
        <Link href={href('/webhooks', { project: project.id })}>
          Webhooks<span class="visually-hidden"> of {project.name}</span>
        </Link>
      </p>
      {(canEdit || canDelete) && (
        <div class="card-actions">
          {canEdit && (
            <button type="button" onClick={() => onSettings(project)}>
              Settings<span class="visually-hidden"> of {project.name}</span>
            </button>
          )}
          {canDelete && (
            <button type="button" class="button-danger-quiet" onClick={() => onDelete(project)}>
              Delete<span class="visually-hidden"> project {project.name}</span>
            </button>
          )}
        </div>
      )}
      {!unknown && !canEdit && (
        <p class="small muted role-note">
          {role.role !== null ? `You are a ${role.role} of this project. ` : ''}Project admins and owners change its settings.
        </p>
      )}
    </article>
  );
}

/** Aliases, what a translation does with a parameter it cannot carry, and how long stored responses are kept, in one line. */
function translationSummary(project: Project): string {
  const aliases = Object.keys(project.model_aliases ?? {}).length;
  const parts = [
    aliases === 0 ? 'no aliases' : aliases === 1 ? '1 alias' : `${formatNumber(aliases)} aliases`,
    project.unsupported_params === 'refuse' ? 'refuses params it cannot carry' : 'drops params it cannot carry',
    `responses kept ${formatNumber(project.responses?.ttl_days ?? 30)} d`,
  ];
  return parts.join(' · ');
}

