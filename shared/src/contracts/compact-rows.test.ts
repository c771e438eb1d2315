import { describe, expect, it } from 'vitest';
import type { AuditEvent } from './audit-event.js';
import { CompactRowsWriter, readCompactRows } from './compact-rows.js';
import type { UsageRecord } from './usage-record.js';

const base: AuditEvent = {
  id: '0192f3a4-5b6c-7d8e-9f00-112233445566',
  request_id: 'client-chosen-id',
  timestamp: 1_764_000_000_123,
  type: 'gateway.request',
  outcome: 'success',
  status: 200,
  error_code: null,
  project_id: '0192f3a4-5b6c-7d8e-9f00-aaaaaaaaaaaa',
  key_id: '0192f3a4-5b6c-7d8e-9f00-bbbbbbbbbbbb',
  actor: null,
  model: 'mock-1',
  provider: 'mock',
  client_ip: '127.0.0.1',
  user_agent: 'test',
  latency_ms: 12,
};

function roundTrip(events: AuditEvent[]): AuditEvent[] {
  const writer = new CompactRowsWriter();
  for (const event of events) writer.add(event, null);
  writer.seal();
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  readCompactRows(writer.dictionary, writer.rows(), usage, audit);
  expect(usage).toEqual([]);
  return audit;
}

describe('compact rows carry every optional audit field', () => {
  it('keeps count, skipped and mcp, and their absence', () => {
    const events: AuditEvent[] = [
      { ...base },
      { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000002', type: 'gateway.throttled', outcome: 'auth_failed', status: 429, count: 37 },
      { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000003', endpoint: 'chat.completions', attempts: 1, providers: ['b'], skipped: ['a', 'c'] },
      { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000004', endpoint: 'mcp', mcp: { server: 'docs', tool: 'search', method: 'tools/call' } },
      { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000005', endpoint: 'mcp', mcp: { server: '*', tool: null, method: 'initialize' } },
      { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000006', mcp: null, skipped: [] },
    ];
    expect(roundTrip(events)).toEqual(events);
  });
});
