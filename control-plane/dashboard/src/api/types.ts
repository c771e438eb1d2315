/**
 * The management API's shapes as the dashboard reads them: declared once in shared
 * (management-api/ and the record contracts), imported here by path since the browser bundle
 * takes those files as they are (types and constant lists, no server module). The batch view is
 * the control plane's own (src/batches/batch-view.ts), a file of the same kind.
 */
export { FINISH_REASONS, type FinishReason } from '../../../../shared/src/contracts/usage-record.js';
export { GATEWAY_ENDPOINTS } from '../../../../shared/src/contracts/gateway-endpoint.js';
export { AUDIT_OUTCOMES, type AuditOutcome } from '../../../../shared/src/contracts/audit-event.js';
export { ACCOUNT_ROLES, PROJECT_ROLES, type AccountRole, type ProjectRole } from '../../../../shared/src/management-api/roles.js';
export {
  AUDIT_TYPES,
  DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  type ApiKey,
  type DeliveryStatus,
  type ExportLink,
  type GatewayInfo,
  type List,
  type McpSetting,
  type ProjectCacheStats,
  type Member,
  type NewApiKey,
  type NewWebhook,
  type Page,
  type Project,
  type ServedModel,
  type SummaryFigures,
  type SummaryGroup,
  type TokenResponse,
  type UsageSeriesAnswer,
  type UsageSummary,
  type User,
  type Webhook,
  type WebhookDelivery,
  type WebhookEventType,
} from '../../../../shared/src/management-api/types.js';
export type { Budget, BudgetInput } from '../../../../shared/src/management-api/budgets.js';
export type { QuotaPeriod, RateLimits } from '../../../../shared/src/contracts/project-policy.js';
export type { StoredUsageRecord as UsageRecord } from '../../../../shared/src/contracts/usage-record.js';
export type { StoredAuditEvent as AuditEvent } from '../../../../shared/src/contracts/audit-event.js';
export { ENDED_BATCH_STATUSES, type BatchView as Batch, type BatchViewPage as BatchPage, type BatchViewStatus as BatchStatus } from '../../../src/batches/batch-view.js';
