import { newRecordId, type AuditEvent } from '@gateway/shared';
import type { RecordSink } from '../records/record-sink.js';

/** An address's failures are counted for this long from its first one. */
export const AUTH_FAILURE_WINDOW_MS = 10_000;
/** Addresses tracked per window; beyond, new addresses go uncounted until the next window. */
const MAX_ADDRESSES = 100_000;
/** Throttled requests are audited as one event per address per this long. */
const AUDIT_EVERY_MS = 1_000;
const MAX_USER_AGENT = 512;

interface Throttled {
  count: number;
  first: number;
  userAgent: string;
}

/**
 * Failed authentications per client address (after TRUST_PROXY), in this proxy worker. Past
 * `limit` failures in a window, requests from that address are refused with 429 unless they carry
 * a key this proxy already holds: no Redis lookup, no body read, and no audit event each — one
 * `gateway.throttled` event per address per second carries their `count`, so the audit trail
 * accounts for every request while a flood cannot grow it without bound.
 *
 * Costs nothing while nobody fails: `refuses()` is one size check then.
 */
export class AuthThrottle {
  /** Per address: failures in its window, which opens at its first failure. */
  private failures = new Map<string, { n: number; ends: number }>();
  private throttled = new Map<string, Throttled>();
  private sweptAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limit: number,
    private readonly records: RecordSink,
  ) {}

  /** A request from `address` presented no key, or one that is not valid. */
  failed(address: string, now = Date.now()): void {
    const seen = this.failures.get(address);
    if (seen !== undefined && seen.ends > now) {
      seen.n++;
      return;
    }
    // Addresses whose window is over are forgotten once a window, or at once when the table is full.
    if (seen === undefined && (this.failures.size >= MAX_ADDRESSES || now - this.sweptAt >= AUTH_FAILURE_WINDOW_MS)) this.sweep(now);
    if (seen !== undefined || this.failures.size < MAX_ADDRESSES) this.failures.set(address, { n: 1, ends: now + AUTH_FAILURE_WINDOW_MS });
  }

  /** Seconds until `address` may try again, or 0 when it is not throttled. */
  refuses(address: string, now = Date.now()): number {
    if (this.failures.size === 0) return 0;
    const seen = this.failures.get(address);
    if (seen === undefined || seen.n < this.limit) return 0;
    if (seen.ends <= now) {
      this.failures.delete(address);
      return 0;
    }
    return Math.max(1, Math.ceil((seen.ends - now) / 1000));
  }

  /** A request refused by the throttle: counted into its address's next audit event. */
  refused(address: string, userAgent: string, now = Date.now()): void {
    const entry = this.throttled.get(address);
    if (entry !== undefined) {
      entry.count++;
      return;
    }
    this.throttled.set(address, { count: 1, first: now, userAgent });
    if (this.timer === null) {
      this.timer = setInterval(() => this.flush(), AUDIT_EVERY_MS);
      this.timer.unref();
    }
  }

  /** Hands one audit event per throttled address to the records; stops the timer when idle. */
  flush(now = Date.now()): void {
    if (this.throttled.size === 0) {
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    const batch = this.throttled;
    this.throttled = new Map();
    for (const [address, entry] of batch) this.records.pushAudit(throttledEvent(address, entry, now));
  }

  close(): void {
    this.flush();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Forgets the addresses whose window is over. */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [address, seen] of this.failures) if (seen.ends <= now) this.failures.delete(address);
  }
}

function throttledEvent(address: string, entry: Throttled, now: number): AuditEvent {
  const id = newRecordId();
  return {
    id,
    request_id: id,
    timestamp: entry.first,
    type: 'gateway.throttled',
    outcome: 'auth_failed',
    status: 429,
    error_code: 'RATE_LIMITED',
    project_id: null,
    key_id: null,
    actor: null,
    model: null,
    provider: null,
    endpoint: null,
    attempts: 0,
    providers: [],
    client_ip: address,
    user_agent: entry.userAgent === '' ? null : entry.userAgent.slice(0, MAX_USER_AGENT),
    latency_ms: 0,
    count: entry.count,
  };
}
