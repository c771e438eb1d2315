import type { List, Member, ProjectRole } from '../api/types.js';
import { useApi, useUser } from '../auth/session-context.js';
import { mayDo, type ProjectAction } from './project-permissions.js';
import { useAsync } from './use-async.js';

export { mayDo, roleAtLeast, type ProjectAction } from './project-permissions.js';

/**
 * The role the signed-in account acts with in a project, so a page can leave out controls the
 * API would refuse. The API has no "my role" call; the member list, which every member may read,
 * names it. An account admin counts as an owner everywhere, as on the server
 * (control-plane/src/auth/permissions.ts). The API stays the judge: this only hides buttons.
 */
export interface ProjectRoleAnswer {
  /** undefined while unknown: still loading, or the member list could not be read (see `error`). */
  role: ProjectRole | null | undefined;
  error: unknown;
}

export function useProjectRole(projectId: string | null): ProjectRoleAnswer {
  const api = useApi();
  const me = useUser();
  const accountAdmin = me.role === 'admin';
  const members = useAsync(
    () =>
      projectId === null || accountAdmin
        ? Promise.resolve([] as Member[])
        : api.get<List<Member>>(`/v1/projects/${projectId}/members`).then((list) => list.data),
    [projectId, accountAdmin],
  );
  if (accountAdmin) return { role: 'owner', error: null };
  if (projectId === null) return { role: null, error: null };
  // The list of the project shown before stays in hand while the new one loads; a project's own
  // list is never empty (it keeps at least one owner).
  const current = members.data?.filter((m) => m.project_id === projectId) ?? [];
  if (members.loading || current.length === 0) return { role: undefined, error: members.error };
  return { role: current.find((m) => m.user_id === me.id)?.role ?? null, error: members.error };
}

/** The hook most pages want: the role, and a `can(action)` answering by it. */
export function useProjectPermissions(projectId: string | null): ProjectRoleAnswer & { can: (action: ProjectAction) => boolean } {
  const answer = useProjectRole(projectId);
  return { ...answer, can: (action) => mayDo(answer.role, action) };
}
