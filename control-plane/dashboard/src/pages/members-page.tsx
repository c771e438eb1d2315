import { useState } from 'preact/hooks';
import { PROJECT_ROLES, type List, type Member, type ProjectRole } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FieldProblem, TextField, useFieldErrors } from '../components/field.js';
import { PageHeading } from '../components/page-heading.js';
import { ProjectPicker, useProjects, useSelectedProject } from '../components/projects-context.js';
import { useToasts } from '../components/toasts.js';
import { formatDateTime } from '../lib/format.js';
import { mayDo } from '../lib/project-permissions.js';
import { Link, navigate } from '../lib/router.js';
import { useAsync } from '../lib/use-async.js';
import { useProjectRole } from '../lib/use-project-role.js';

/**
 * A project's members: add one by email, change a role, remove one, leave. Only the controls the
 * signed-in role may use are shown (project admins manage members; only owners touch the owner
 * role; anyone may leave); the API checks again. A project keeps at least one owner, so the last
 * owner's role, removal and leaving are shown disabled, with the reason beside them.
 */
const ROLE_HELP: Record<ProjectRole, string> = {
  viewer: 'reads the project, its keys, usage and audit',
  member: 'also creates keys and deletes their own',
  admin: 'also deletes any key, changes the quota and manages members',
  owner: 'also grants the owner role and deletes the project',
};
const LAST_OWNER = 'The only owner: make someone else owner first.';

export function MembersPage() {
  const api = useApi();
  const notify = useToasts();
  const me = useUser();
  const projects = useProjects();
  const selected = useSelectedProject({ required: true });
  const projectId = selected.projectId;
  const members = useAsync(
    () => (projectId === null ? Promise.resolve([] as Member[]) : api.get<List<Member>>(`/v1/projects/${projectId}/members`).then((l) => l.data)),
    [projectId],
  );
  const { role: myRole } = useProjectRole(projectId);
  const [actionError, setActionError] = useState<unknown>(null);
  const [removing, setRemoving] = useState<Member | null>(null);

  const list = (members.data ?? []).filter((m) => m.project_id === projectId);
  const owners = list.filter((m) => m.role === 'owner').length;
  const manage = mayDo(myRole, 'member.manage');
  const manageOwners = mayDo(myRole, 'member.manage_owners');
  const lastOwner = (m: Member) => m.role === 'owner' && owners <= 1;
  /** Whether the signed-in role may change this member's role or remove them (self: leaving is separate). */
  const mayChange = (m: Member) => manage && (m.role !== 'owner' || manageOwners);
  const leaving = removing !== null && removing.user_id === me.id;

  const changeRole = async (member: Member, role: ProjectRole) => {
    setActionError(null);
    try {
      await api.post<Member>(`/v1/projects/${member.project_id}/members`, { user_id: member.user_id, role });
      notify(`${member.email} is now ${role}.`);
    } catch (err) {
      setActionError(err);
    }
    members.reload();
  };

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
      {projectId !== null && (
        <>
          {manage ? (
            <AddMemberForm
              projectId={projectId}
              roles={manageOwners ? PROJECT_ROLES : PROJECT_ROLES.filter((r) => r !== 'owner')}
              memberIds={list.map((m) => m.user_id)}
              onSaved={(member, added) => {
                notify(added ? `${member.email} added as ${member.role}.` : `${member.email} is now ${member.role}.`);
                members.reload();
              }}
            />
          ) : (
            myRole !== undefined && (
              <p class="banner banner-info">
                <span aria-hidden="true">ℹ </span>
                <span>
                  You are {myRole === null ? 'not a member' : `${article(myRole)} ${myRole}`} of this project. Its admins and owners add and remove members and
                  change roles.
                </span>
              </p>
            )
          )}
          <section aria-labelledby="member-list-heading" aria-busy={members.loading}>
            <div class="section-heading">
              <h2 id="member-list-heading">Members of “{selected.project?.name ?? '…'}”</h2>
              <button type="button" onClick={members.reload}>
                Refresh
              </button>
            </div>
            <ErrorBanner error={members.error} action="Loading members failed" />
            <ErrorBanner error={actionError} action="Changing the member failed" />
            {list.length > 0 && (
              <div class="table-scroll" role="region" aria-labelledby="member-list-heading" tabIndex={0}>
                <table class="members table-stack">
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Role</th>
                      <th scope="col">Member since</th>
                      <th scope="col" class="cell-actions">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((m) => {
                      const self = m.user_id === me.id;
                      const noteId = `member-note-${m.user_id}`;
                      return (
                        <tr key={m.user_id}>
                          <th scope="row" class="wrap-anywhere">
                            {m.email}
                            {self && <span class="muted"> (you)</span>}
                          </th>
                          <td data-label="Role">
                            {mayChange(m) ? (
                              <select
                                aria-label={`Role of ${m.email}`}
                                value={m.role}
                                disabled={lastOwner(m)}
                                aria-describedby={lastOwner(m) ? noteId : undefined}
                                onChange={(e) => void changeRole(m, e.currentTarget.value as ProjectRole)}
                              >
                                {(manageOwners ? PROJECT_ROLES : PROJECT_ROLES.filter((r) => r !== 'owner')).map((r) => (
                                  <option value={r} key={r}>
                                    {r}
                                  </option>
                                ))}
                              </select>
                            ) : (
                              <span class={`role role-${m.role}`}>{m.role}</span>
                            )}
                            {lastOwner(m) && (mayChange(m) || self) && (
                              <p id={noteId} class="hint member-note">
                                {LAST_OWNER}
                              </p>
                            )}
                          </td>
                          <td class="nowrap" data-label="Member since">
                            {formatDateTime(m.created_at)}
                          </td>
                          <td class="cell-actions">
                            <div class="row-actions">
                              {self ? (
                                <button
                                  type="button"
                                  class="button-danger-quiet"
                                  disabled={lastOwner(m)}
                                  aria-describedby={lastOwner(m) ? noteId : undefined}
                                  onClick={() => setRemoving(m)}
                                >
                                  Leave project
                                </button>
                              ) : (
                                mayChange(m) && (
                                  <button
                                    type="button"
                                    class="button-danger-quiet"
                                    disabled={lastOwner(m)}
                                    aria-describedby={lastOwner(m) ? noteId : undefined}
                                    aria-label={`Remove ${m.email}`}
                                    onClick={() => setRemoving(m)}
                                  >
                                    Remove
                                  </button>
                                )
                              )}
                            </div>
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            <p class="hint">
              {PROJECT_ROLES.map((r) => `${article(r).replace(/^a/, 'A')} ${r} ${ROLE_HELP[r]}.`).join(' ')} A project always keeps at least one owner.
            </p>
          </section>
          <ConfirmDialog
            open={removing !== null}
            title={leaving ? `Leave “${selected.project?.name ?? ''}”?` : `Remove ${removing?.email ?? ''}?`}
            confirmLabel={leaving ? 'Leave project' : 'Remove member'}
            onConfirm={async () => {
              if (removing === null) return;
              await api.delete(`/v1/projects/${removing.project_id}/members/${removing.user_id}`);
              if (leaving) {
                notify(`You left “${selected.project?.name ?? ''}”.`);
                projects.reload();
                navigate('/projects');
              } else {
                notify(`${removing.email} removed from the project.`);
                members.reload();
              }
            }}
            onClose={() => setRemoving(null)}
          >
            <p>
              {leaving
                ? 'You lose access to its keys, usage and audit at once, unless you are an account admin. A project admin can add you again.'
                : 'They lose access to the project at once. Keys they created keep working until someone deletes them.'}
            </p>
          </ConfirmDialog>
        </>
      )}
    </>
  );
}

function article(role: ProjectRole): string {
  return role === 'admin' || role === 'owner' ? 'an' : 'a';
}

/** `memberIds`: who was a member before, to tell an addition (201) from a role change (200). */
function AddMemberForm({
  projectId,
  roles,
  memberIds,
  onSaved,
}: {
  projectId: string;
  roles: readonly ProjectRole[];
  memberIds: string[];
  onSaved: (member: Member, added: boolean) => void;
}) {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<ProjectRole>('member');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fields = useFieldErrors({ email: 'email', user_id: 'email', role: 'role' });

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    fields.reset();
    if (email.trim() === '') return fields.set('email', 'Enter the email of the account to add.');
    setBusy(true);
    try {
      const member = await api.post<Member>(`/v1/projects/${projectId}/members`, { email: email.trim(), role });
      setEmail('');
      onSaved(member, !memberIds.includes(member.user_id));
    } catch (err) {
      if (!fields.fromApi(err)) setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="add-member-heading">
      <h2 id="add-member-heading">Add a member</h2>
      <ErrorBanner error={error} action="Adding the member failed" />
      <form class="form-row" onSubmit={submit} noValidate>
        <TextField
          id="member-email"
          label="Email"
          type="email"
          autocomplete="off"
          required
          class="field-grow"
          value={email}
          onInput={(v) => {
            setEmail(v);
            fields.clear('email');
          }}
          error={fields.errors.email}
          hint="The email of an existing account. Account admins create accounts on the Accounts page."
        />
        <div class="field">
          <label for="member-role">Role</label>
          <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as ProjectRole)} aria-describedby="member-role-hint">
            {roles.map((r) => (
              <option value={r} key={r}>
                {r}
              </option>
            ))}
          </select>
          <p id="member-role-hint" class="hint">
            {article(role).replace(/^a/, 'A')} {role} {ROLE_HELP[role]}.
          </p>
          <FieldProblem id="member-role-problem" message={fields.errors.role} />
        </div>
        <div class="field field-submit">
          <button type="submit" class="button-primary" aria-disabled={busy} aria-busy={busy}>
            {busy ? 'Adding…' : 'Add member'}
          </button>
        </div>
      </form>
    </section>
  );
}
