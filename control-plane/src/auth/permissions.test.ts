import { describe, expect, it } from 'vitest';
import { can, effectiveRole, PROJECT_ROLES, type ProjectAction, type ProjectRole } from './permissions.js';

/** The documented table (docs/management-api.md), row by row. */
const EXPECTED: Record<ProjectAction, ProjectRole[]> = {
  'project.read': ['viewer', 'member', 'admin', 'owner'],
  'records.read': ['viewer', 'member', 'admin', 'owner'],
  'key.create': ['member', 'admin', 'owner'],
  'key.delete_own': ['member', 'admin', 'owner'],
  'batch.cancel': ['member', 'admin', 'owner'],
  'key.delete_any': ['admin', 'owner'],
  'project.update': ['admin', 'owner'],
  'member.manage': ['admin', 'owner'],
  'member.manage_owners': ['owner'],
  'webhook.manage': ['admin', 'owner'],
  'project.delete': ['owner'],
};

describe('project permissions', () => {
  it('grants each action to exactly the documented roles', () => {
    for (const [action, roles] of Object.entries(EXPECTED) as [ProjectAction, ProjectRole[]][]) {
      expect(PROJECT_ROLES.filter((role) => can(role, action)), action).toEqual(PROJECT_ROLES.filter((r) => roles.includes(r)));
      expect(can(null, action)).toBe(false);
    }
  });

  it('treats an account admin as an owner of every project', () => {
    expect(effectiveRole('admin', null)).toBe('owner');
    expect(effectiveRole('admin', 'viewer')).toBe('owner');
    expect(effectiveRole('member', 'viewer')).toBe('viewer');
    expect(effectiveRole('member', null)).toBeNull();
  });
});
