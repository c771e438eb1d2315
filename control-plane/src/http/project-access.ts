import { Errors, type GatewayError } from '@gateway/shared';
import { can, effectiveRole, type ProjectAction, type ProjectRole } from '../auth/permissions.js';
import type { Principal } from '../auth/require-auth.js';
import type { Queryable } from '../db/connect.js';
import { findProjectForUser, type Project } from '../db/projects.js';

/**
 * The gate in front of everything under /v1/projects/{id}. A project the caller does not belong
 * to is answered exactly like one that does not exist (404), so ids of other tenants cannot be
 * probed; a member whose role is too low gets 403.
 */
export interface ProjectAccess {
  project: Project;
  role: ProjectRole;
}

export function projectNotFound(): GatewayError {
  return Errors.noSuchProject('id');
}

export function forbidden(role: ProjectRole, what: string): GatewayError {
  return Errors.projectRoleForbidden(role, what);
}

export async function projectAccess(
  sql: Queryable,
  principal: Principal,
  projectId: string,
  action: ProjectAction,
  what: string,
  options: { lock?: 'update' | 'share' } = {},
): Promise<ProjectAccess> {
  const found = await findProjectForUser(sql, projectId, principal.userId, options);
  const role = found === null ? null : effectiveRole(principal.role, found.role);
  if (found === null || role === null) throw projectNotFound();
  if (!can(role, action)) throw forbidden(role, what);
  return { project: found.project, role };
}
