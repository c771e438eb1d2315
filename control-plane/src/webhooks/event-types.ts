/**
 * The events a webhook can subscribe to. `gateway.request.failed` is opt-in like every other (an
 * endpoint gets only what it lists) and batched: one delivery carries a window's failed requests.
 */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@gateway/shared';

/** Quota thresholds, in percent of the project's quota, each announced once per period. */
export const QUOTA_THRESHOLDS = [80, 100] as const;

/** One failed request as a gateway.request.failed event carries it: the audit event's summary. */
export interface FailedRequestSummary {
  request_id: string;
  timestamp: number;
  status: number;
  error_code: string | null;
  model: string | null;
  provider: string | null;
  key_id: string | null;
  endpoint: string | null;
}

/** At most this many requests travel in one gateway.request.failed event; `count` says how many failed. */
export const MAX_FAILED_REQUESTS_PER_EVENT = 100;

/** One request a guardrail blocked, as a guardrail.blocked event carries it. */
export interface BlockedRequestSummary extends FailedRequestSummary {
  /** The guardrails that blocked it (input: the request was refused; output: the answer withheld). */
  guardrails: string[];
}
