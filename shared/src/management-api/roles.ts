/**
 * Who may do what, the one table the control plane enforces and the dashboard and gatewayctl show.
 * Two layers: the account role (`admin` sees and manages everything, `member` only the projects it
 * belongs to) and, per project, a member role ranked viewer < member < admin < owner. Each action
 * names the lowest project role that may do it; an account admin counts as an owner of every
 * project.
 *
 * | action                           | lowest role |
 * |----------------------------------|-------------|
 * | read project, keys, members, usage, audit, webhooks and their deliveries | viewer |
 * | create a key; delete a key it created; cancel a batch | member |
 * | delete any key, rename, change the quota, add / change / remove members, manage webhooks | admin |
 * | delete the project; grant, change or remove the owner role | owner |
 *
 * Anyone may leave a project (remove their own membership), except its last owner. Pure data and
 * functions: the dashboard's bundle imports this file as it is.
 */
export type AccountRole = 'admin' | 'member';
export type ProjectRole = 'owner' | 'admin' | 'member' | 'viewer';

/** Lowest first, as role selectors list them. */
export const ACCOUNT_ROLES: readonly AccountRole[] = ['member', 'admin'];
/** Lowest first: viewer < member < admin < owner. */
export const PROJECT_ROLES: readonly ProjectRole[] = ['viewer', 'member', 'admin', 'owner'];

export const LOWEST_ROLE_FOR = {
  'project.read': 'viewer',
  'records.read': 'viewer',
  'key.create': 'member',
  'key.delete_own': 'member',
  'batch.cancel': 'member',
  'key.delete_any': 'admin',
  'project.update': 'admin',
  'member.manage': 'admin',
  'member.manage_owners': 'owner',
  'webhook.manage': 'admin',
  'project.delete': 'owner',
} as const satisfies Record<string, ProjectRole>;

export type ProjectAction = keyof typeof LOWEST_ROLE_FOR;

/** Whether `role` is `lowest` or above. */
export function roleAtLeast(role: ProjectRole | null, lowest: ProjectRole): boolean {
  return role !== null && PROJECT_ROLES.indexOf(role) >= PROJECT_ROLES.indexOf(lowest);
}

/** The role the caller acts with in a project: an account admin is an owner everywhere. */
export function effectiveRole(accountRole: AccountRole, projectRole: ProjectRole | null): ProjectRole | null {
  return accountRole === 'admin' ? 'owner' : projectRole;
}

/** Whether someone acting with `role` (null: not a member) may do `action`. */
export function can(role: ProjectRole | null, action: ProjectAction): boolean {
  return roleAtLeast(role, LOWEST_ROLE_FOR[action]);
}
