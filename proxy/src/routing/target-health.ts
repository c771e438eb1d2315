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

/** Told of what an operator should see (routing/provider-log.ts). */
export interface HealthEvents {
  failed(code: string, cooldownMs: number | null): void;
  recovered(): void;
}

export class TargetHealth {
  state: HealthState = 'closed';
  private failures = 0;
  private cooldownMs: number;
  private until = 0;
  private trialInFlight = false;
  /** Times this provider entered a cooldown (a metric). */
  cooldowns = 0;

  constructor(
    private readonly config: CooldownConfig,
    private readonly events: HealthEvents | null = null,
  ) {
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
    if (this.state !== 'closed') this.events?.recovered();
    this.failures = 0;
    this.trialInFlight = false;
    this.state = 'closed';
    this.cooldownMs = this.config.base_ms;
  }

  /** A retryable failure; `retryAfterMs` is the provider's own word on when to come back. */
  failed(now: number, retryAfterMs = 0, code = 'UPSTREAM_ERROR'): void {
    this.failures++;
    let cooldown: number | null = null;
    if (this.state === 'half-open') {
      this.trialInFlight = false;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.config.max_ms);
      cooldown = this.open(now, retryAfterMs);
    } else if (this.failures >= this.config.failures) {
      cooldown = this.open(now, retryAfterMs);
    }
    this.events?.failed(code, cooldown);
  }

  /** The attempt ended without a verdict (cancelled): a trial slot is given back. */
  released(): void {
    if (this.state === 'half-open') this.trialInFlight = false;
  }

  /** Starts (or extends) a cooldown; returns its length. */
  private open(now: number, retryAfterMs: number): number {
    if (this.state !== 'open') this.cooldowns++;
    this.state = 'open';
    const ms = Math.max(this.cooldownMs, retryAfterMs);
    this.until = now + ms;
    return ms;
  }
}
