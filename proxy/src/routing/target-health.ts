import type { CooldownConfig } from '@gateway/shared';

/**
 * Whether a provider is worth trying: after `failures` retryable failures in a row it is skipped
 * for a cooldown (doubling on each failed trial, up to `max_ms`), then tried with one request
 * (half-open) whose outcome closes or reopens it. A provider's Retry-After extends the cooldown.
 *
 * Per proxy process (per worker): each learns a provider is down from its own requests within N
 * failures, which costs a few requests per process and needs no coordination — a shared state in
 * Redis would put a round trip on every attempt and make a Redis fault a routing fault.
 */
export type HealthState = 'closed' | 'open' | 'half-open';

export class TargetHealth {
  state: HealthState = 'closed';
  private failures = 0;
  private cooldownMs: number;
  private until = 0;
  private trialInFlight = false;
  /** Times this provider entered a cooldown (a metric). */
  cooldowns = 0;

  constructor(private readonly config: CooldownConfig) {
    this.cooldownMs = config.base_ms;
  }

  /** Whether a request may go to it now; in half-open state only one trial at a time may. */
  available(now: number): boolean {
    if (this.state === 'closed') return true;
    if (now < this.until) return false;
    if (this.trialInFlight) return false;
    this.state = 'half-open';
    this.trialInFlight = true;
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.trialInFlight = false;
    this.state = 'closed';
    this.cooldownMs = this.config.base_ms;
  }

  /** A retryable failure; `retryAfterMs` is the provider's own word on when to come back. */
  failed(now: number, retryAfterMs = 0): void {
    this.failures++;
    if (this.state === 'half-open') {
      this.trialInFlight = false;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.config.max_ms);
      this.open(now, retryAfterMs);
    } else if (this.failures >= this.config.failures) {
      this.open(now, retryAfterMs);
    }
  }

  /** The attempt ended without a verdict (cancelled): a trial slot is given back. */
  released(): void {
    if (this.state === 'half-open') this.trialInFlight = false;
  }

  private open(now: number, retryAfterMs: number): void {
    if (this.state !== 'open') this.cooldowns++;
    this.state = 'open';
    this.until = now + Math.max(this.cooldownMs, retryAfterMs);
  }
}
