/**
 * Who may do what: the one table, in shared (management-api/roles.ts), which the dashboard and
 * gatewayctl read too. Kept here under its old name for the control plane's imports.
 */
export { ACCOUNT_ROLES, PROJECT_ROLES, can, effectiveRole, type AccountRole, type ProjectAction, type ProjectRole } from '@gateway/shared';
