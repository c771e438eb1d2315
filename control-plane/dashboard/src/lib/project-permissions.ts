import { LOWEST_ROLE_FOR, roleAtLeast, type ProjectAction, type ProjectRole } from '../../../../shared/src/management-api/roles.js';

/** The server's own table (shared/src/management-api/roles.ts), so a control shows exactly when the API allows it. */
export { LOWEST_ROLE_FOR, roleAtLeast, type ProjectAction };

/**
 * Whether `role` may do `action`. While the role is unknown (undefined: loading, or the member list
 * could not be read) the answer is true: the control shows and the API decides, rather than a
 * control missing for someone who may use it.
 */
export function mayDo(role: ProjectRole | null | undefined, action: ProjectAction): boolean {
  if (role === undefined) return true;
  return roleAtLeast(role, LOWEST_ROLE_FOR[action]);
}
