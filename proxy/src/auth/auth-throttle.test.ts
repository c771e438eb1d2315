import { describe, expect, it } from 'vitest';
import type { AuditEvent, UsageRecord } from '@gateway/shared';
import type { RecordSink } from '../records/record-sink.js';
import { AUTH_FAILURE_WINDOW_MS, AuthThrottle } from './auth-throttle.js';

/** The records the throttle hands over, kept in order (the sink's contract: push returns at once). */
function collecting(): RecordSink & { audit: AuditEvent[] } {
  const audit: AuditEvent[] = [];
  return {
    audit,
    pushAudit: (event: AuditEvent) => void audit.push(event),
    pushUsage: (_record: UsageRecord) => {},
    queued: async () => {},
    flush: async () => {},
    close: async () => {},
  };
}

describe('AuthThrottle', () => {
  it('throttles an address at its limit, for the rest of the window opened by its first failure', () => {
    const throttle = new AuthThrottle(3, collecting());
    const t0 = 1_000_000;
    expect(throttle.refuses('203.0.113.1', t0)).toBe(0);
    for (let i = 0; i < 2; i++) throttle.failed('203.0.113.1', t0 + i);
    expect(throttle.refuses('203.0.113.1', t0 + 2)).toBe(0);
    throttle.failed('203.0.113.1', t0 + 2);
    expect(throttle.refuses('203.0.113.1', t0 + 3)).toBe(10);
    expect(throttle.refuses('203.0.113.1', t0 + 9_500)).toBe(1);
    // Another address is not affected; the window ends and the address may try again.
    expect(throttle.refuses('203.0.113.2', t0 + 3)).toBe(0);
    expect(throttle.refuses('203.0.113.1', t0 + AUTH_FAILURE_WINDOW_MS)).toBe(0);
    throttle.failed('203.0.113.1', t0 + AUTH_FAILURE_WINDOW_MS + 1);
    expect(throttle.refuses('203.0.113.1', t0 + AUTH_FAILURE_WINDOW_MS + 2)).toBe(0);
  });

  it('audits the requests it refused as one gateway.throttled event per address per flush, with their count', () => {
    const sink = collecting();
    const throttle = new AuthThrottle(1, sink);
    for (let i = 0; i < 7; i++) throttle.refused('198.51.100.7', 'flood/1.0', 5_000 + i);
    throttle.refused('198.51.100.8', '', 5_000);
    throttle.flush(6_000);
    expect(sink.audit.map((e) => [e.type, e.client_ip, e.count, e.user_agent, e.status, e.error_code, e.outcome, e.timestamp])).toEqual([
      ['gateway.throttled', '198.51.100.7', 7, 'flood/1.0', 429, 'RATE_LIMITED', 'auth_failed', 5_000],
      ['gateway.throttled', '198.51.100.8', 1, null, 429, 'RATE_LIMITED', 'auth_failed', 5_000],
    ]);
    throttle.flush(7_000);
    expect(sink.audit).toHaveLength(2);
    throttle.refused('198.51.100.7', 'flood/1.0', 8_000);
    throttle.close();
    expect(sink.audit.map((e) => e.count)).toEqual([7, 1, 1]);
  });
});
