import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/api-error.js';
import { PROJECT_ROLES, type List, type Member, type ProjectRole } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ErrorBanner } from '../components/error-banner.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { copyText } from '../lib/clipboard.js';
import { formatDateTime } from '../lib/format.js';
import { isUuid } from '../lib/record-query.js';
import { Link } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';

/**
 * A project's members. The form is offered to everyone: the API decides who may add whom
 * (project admins add members, only owners grant the owner role), and its refusal is shown
 * as it came, with the reason.
 */
const ROLE_HELP: Record<ProjectRole, string> = {
  viewer: 'reads the project, its keys, usage and audit',
  member: 'also creates keys and deletes their own',
  admin: 'also deletes any key, changes the quota and manages members',
  owner: 'also grants the owner role and deletes the project',
};

export function MembersPage() {
  const api = useApi();
  const notify = useToasts();
  const me = useUser();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const members = useAsync(
    () => (projectId === null ? Promise.resolve([] as Member[]) : api.get<List<Member>>(`/v1/projects/${projectId}/members`).then((l) => l.data)),
    [projectId],
  );

  return (
    <>
      <PageHeading title="Members">
        <ProjectPicker selected={selected} allowAll={false} />
      </PageHeading>
      {projectId === null && selected.project === null && (
        <p class="empty">
          No project yet. <Link href="/projects">Create a project</Link> first.
        </p>
      )}
      <YourId userId={me.id} />
      {projectId !== null && (
        <>
          <AddMemberForm
            projectId={projectId}
            memberIds={members.data?.map((m) => m.user_id) ?? []}
            onSaved={(member, added) => {
              notify(added ? `${member.email} added as ${member.role}.` : `${member.email} is now ${member.role}.`);
              members.reload();
            }}
          />
          <section aria-labelledby="member-list-heading" aria-busy={members.loading}>
            <div class="section-heading">
              <h2 id="member-list-heading">Members of “{selected.project?.name ?? '…'}”</h2>
              <button type="button" onClick={members.reload}>
                Refresh
              </button>
            </div>
            <ErrorBanner error={members.error} action="Loading members failed" />
            {members.data !== undefined && members.data.length > 0 && (
              <div class="table-scroll" role="region" aria-labelledby="member-list-heading" tabIndex={0}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Role</th>
                      <th scope="col">Member since</th>
                      <th scope="col">User id</th>
                    </tr>
                  </thead>
                  <tbody>
                    {members.data.map((m) => (
                      <tr key={m.user_id}>
                        <th scope="row">
                          {m.email}
                          {m.user_id === me.id && <span class="muted"> (you)</span>}
                        </th>
                        <td>
                          <span class={`role role-${m.role}`}>{m.role}</span>
                        </td>
                        <td>{formatDateTime(m.created_at)}</td>
                        <td>
                          <code class="small">{m.user_id}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </>
      )}
    </>
  );
}

function YourId({ userId }: { userId: string }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <section class="panel your-id" aria-labelledby="your-id-heading">
      <h2 id="your-id-heading">Your user id</h2>
      <p class="hint" id="your-id-hint">
        Projects add people by user id. To be added to a project, send this to one of its admins.
      </p>
      <div class="secret-row">
        <input ref={field} readOnly value={userId} aria-labelledby="your-id-heading" aria-describedby="your-id-hint" class="mono" onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={async () => setCopied(await copyText(userId, field.current))}>
          Copy id
        </button>
      </div>
      <p class="hint" role="status">
        {copied === true && '✓ Copied.'}
        {copied === false && 'Copying failed: the id is selected, copy it with Ctrl+C.'}
      </p>
    </section>
  );
}

/** `memberIds`: who was a member before, to tell an addition (201) from a role change (200). */
function AddMemberForm({ projectId, memberIds, onSaved }: { projectId: string; memberIds: string[]; onSaved: (member: Member, added: boolean) => void }) {
  const api = useApi();
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<ProjectRole>('member');
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (!isUuid(userId)) return setProblem('A user id looks like 6f1c2a9e-…: 32 hex digits in five groups.');
    setProblem(null);
    setError(null);
    setBusy(true);
    try {
      const member = await api.post<Member>(`/v1/projects/${projectId}/members`, { user_id: userId.trim(), role });
      setUserId('');
      onSaved(member, !memberIds.includes(member.user_id));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const forbidden = error instanceof ApiError && error.status === 403;
  return (
    <section class="panel" aria-labelledby="add-member-heading">
      <h2 id="add-member-heading">Add a member or change a role</h2>
      {forbidden ? (
        <div class="banner banner-error" role="alert">
          <span class="banner-icon" aria-hidden="true">
            ⊘
          </span>
          <span>
            <strong>Not allowed (403 FORBIDDEN).</strong> {(error as ApiError).message} Project admins and owners add members; only owners grant or change
            the owner role.
          </span>
        </div>
      ) : (
        <ErrorBanner error={error} action="Adding the member failed" />
      )}
      <form class="form-row" onSubmit={submit}>
        <div class="field field-grow">
          <label for="member-user-id">User id</label>
          <input
            id="member-user-id"
            class="mono"
            required
            value={userId}
            onInput={(e) => setUserId(e.currentTarget.value)}
            aria-invalid={problem !== null}
            aria-describedby={problem ? 'member-user-id-problem' : undefined}
            autocomplete="off"
            spellcheck={false}
          />
          {problem && (
            <p id="member-user-id-problem" class="field-problem" role="alert">
              <span aria-hidden="true">⚠ </span>
              {problem}
            </p>
          )}
        </div>
        <div class="field">
          <label for="member-role">Role</label>
          <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as ProjectRole)} aria-describedby="member-role-hint">
            {PROJECT_ROLES.map((r) => (
              <option value={r} key={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Saving…' : 'Add member'}
          </button>
        </div>
      </form>
      <p id="member-role-hint" class="hint">
        A {role} {ROLE_HELP[role]}.
      </p>
    </section>
  );
}
