/**
 * When to trade the token for a new one. Early enough that a slow network, a retry or a
 * background tab whose timers the browser holds back still finish before expiry; late enough
 * not to churn tokens (each refresh is an audit event).
 */
const MAX_MARGIN_MS = 5 * 60_000;
const MIN_RETRY_MS = 2_000;
const MAX_RETRY_MS = 60_000;

/** Delay from receiving a token that lives `lifetimeMs` to refreshing it: 55 min for the API's hour. */
export function refreshDelayMs(lifetimeMs: number): number {
  if (!(lifetimeMs > 0)) return 0;
  const margin = Math.min(MAX_MARGIN_MS, lifetimeMs / 4);
  return Math.floor(lifetimeMs - margin);
}

/**
 * Delay before the next try after a failed refresh (network down, 5xx): doubling from 2 s to a
 * minute, and never past the moment the token dies, so the last try still carries a live token.
 * null: no time is left to try again.
 */
export function retryDelayMs(attempt: number, remainingMs: number): number | null {
  const usable = remainingMs - 1_000;
  if (usable <= 0) return null;
  const backoff = Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.min(backoff, usable);
}

/** True when a timer that should have fired is overdue (the tab slept): refresh at once. */
export function refreshIsDue(now: number, refreshAt: number): boolean {
  return now >= refreshAt;
}
