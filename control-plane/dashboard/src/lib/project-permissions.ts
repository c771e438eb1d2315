import { PROJECT_ROLES, type ProjectRole } from '../api/types.js';

/** Whether `role` is `lowest` or above, in the order viewer < member < admin < owner. */
export function roleAtLeast(role: ProjectRole | null, lowest: ProjectRole): boolean {
  return role !== null && PROJECT_ROLES.indexOf(role) >= PROJECT_ROLES.indexOf(lowest);
}

/**
 * What a project role may do, as the server's table says (control-plane/src/auth/permissions.ts,
 * kept equal by a test): pages show a control only when `mayDo(role, action)`.
 */
export const LOWEST_ROLE_FOR = {
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
} as const satisfies Record<string, ProjectRole>;
export type ProjectAction = keyof typeof LOWEST_ROLE_FOR;

/**
 * Whether `role` may do `action`. While the role is unknown (undefined: loading, or the member list
 * could not be read) the answer is true: the control shows and the API decides, rather than a
 * control missing for someone who may use it.
 */
export function mayDo(role: ProjectRole | null | undefined, action: ProjectAction): boolean {
  if (role === undefined) return true;
  return roleAtLeast(role, LOWEST_ROLE_FOR[action]);
}
