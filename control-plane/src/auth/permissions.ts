/**
 * Who may do what. Two layers: the account role (`admin` sees and manages everything, `member`
 * only the projects it belongs to) and, per project, a member role ranked
 * viewer < member < admin < owner. Each action names the lowest project role that may do it;
 * an account admin counts as an owner of every project.
 *
 * | action                           | lowest role |
 * |----------------------------------|-------------|
 * | read project, keys, members, usage, audit, webhooks and their deliveries | viewer |
 * | create a key; delete a key it created     | member |
 * | delete any key, rename, change the quota, add / change / remove members, manage webhooks | admin |
 * | delete the project; grant, change or remove the owner role | owner |
 *
 * Anyone may leave a project (remove their own membership), except its last owner.
 */
export type AccountRole = 'admin' | 'member';
export type ProjectRole = 'owner' | 'admin' | 'member' | 'viewer';

export const ACCOUNT_ROLES: readonly AccountRole[] = ['admin', 'member'];
export const PROJECT_ROLES: readonly ProjectRole[] = ['owner', 'admin', 'member', 'viewer'];

export type ProjectAction =
  | 'project.read'
  | 'project.update'
  | 'project.delete'
  | 'key.create'
  | 'key.delete_own'
  | 'key.delete_any'
  | 'member.manage'
  | 'member.manage_owners'
  | 'webhook.manage'
  | 'records.read';

const RANK: Record<ProjectRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

const LOWEST_ROLE: Record<ProjectAction, ProjectRole> = {
  'project.read': 'viewer',
  'records.read': 'viewer',
  'key.create': 'member',
  'key.delete_own': 'member',
  'key.delete_any': 'admin',
  'project.update': 'admin',
  'member.manage': 'admin',
  'member.manage_owners': 'owner',
  'webhook.manage': 'admin',
  'project.delete': 'owner',
};

/** The role the caller acts with in a project: an account admin is an owner everywhere. */
export function effectiveRole(accountRole: AccountRole, projectRole: ProjectRole | null): ProjectRole | null {
  return accountRole === 'admin' ? 'owner' : projectRole;
}

/** Whether someone acting with `role` (null: not a member) may do `action`. */
export function can(role: ProjectRole | null, action: ProjectAction): boolean {
  return role !== null && RANK[role] >= RANK[LOWEST_ROLE[action]];
}
