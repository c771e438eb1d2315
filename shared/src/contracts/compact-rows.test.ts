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

describe('compact rows carry the attribution fields of batch version 4', () => {
  it('keeps tags, end user, cache and guardrails on both records, and their absence', () => {
    const shared = { team: 'search', feature: 'rag' };
    const usage: UsageRecord = {
      id: base.id,
      request_id: base.request_id,
      project_id: base.project_id as string,
      key_id: base.key_id as string,
      timestamp: base.timestamp,
      model: 'mock-1',
      provider: 'mock',
      tokens: { input: 100, output: 5, total: 105, cached: 40, cache_write: 30 },
      cost_usd: 0,
      latency_ms: 12,
      finish_reason: 'stop',
      stream: true,
      endpoint: 'messages',
      tags: shared,
      end_user: 'user-42',
      cache_hit: true,
      saved_usd: 0.00125,
      requested_model: 'claude-opus-9',
    };
    const audit: AuditEvent = {
      ...base,
      tags: shared,
      end_user: 'user-42',
      cache: 'hit',
      guardrails: [
        { id: 'pii', stage: 'input', action: 'mask' },
        { id: 'hook', stage: 'output', action: 'flag', failed: true },
      ],
    };
    const second = { ...audit, id: '0192f3a4-5b6c-7d8e-9f00-000000000009', cache: 'miss' as const, guardrails: [], end_user: null };
    const plain = { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000010' };
    const plainUsage: UsageRecord = { ...usage, id: plain.id, tokens: { input: 1, output: 1, total: 2 } };
    delete plainUsage.tags;
    delete plainUsage.end_user;
    delete plainUsage.cache_hit;
    delete plainUsage.saved_usd;
    delete plainUsage.requested_model;

    const writer = new CompactRowsWriter();
    writer.add(audit, usage);
    writer.add(second, null);
    writer.add(plain, plainUsage);
    writer.seal();
    // One dictionary entry for tags two rows share.
    expect(writer.dictionary.filter((v) => v === shared)).toHaveLength(1);
    const usageOut: UsageRecord[] = [];
    const auditOut: AuditEvent[] = [];
    readCompactRows(writer.dictionary, writer.rows(), usageOut, auditOut);
    expect(auditOut).toEqual([audit, second, plain]);
    expect(usageOut).toEqual([usage, plainUsage]);
    expect(Object.keys(auditOut[2]!)).not.toContain('tags');
    expect(Object.keys(usageOut[1]!)).not.toContain('cache_hit');
    expect(Object.keys(usageOut[1]!)).not.toContain('requested_model');
  });
});

describe('compact rows carry the batch id of batch version 6', () => {
  it("keeps a usage record's and an audit event's batch_id, beside the other attribution fields or alone", () => {
    const usage: UsageRecord = {
      id: base.id,
      request_id: base.request_id,
      project_id: base.project_id as string,
      key_id: base.key_id as string,
      timestamp: base.timestamp,
      model: 'mock-1',
      provider: 'mock',
      tokens: { input: 10, output: 2, total: 12 },
      latency_ms: 12,
      finish_reason: 'stop',
      stream: false,
      batch_id: 'batch_0192f3a45b6c7d8e',
    };
    const audit: AuditEvent = { ...base, batch_id: 'batch_0192f3a45b6c7d8e' };
    // With other attribution bits set, the batch id still comes last in its byte's fields.
    const tagged: AuditEvent = { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000011', tags: { team: 'ads' }, guardrails: [], batch_id: 'msgbatch_01abc' };
    const taggedUsage: UsageRecord = { ...usage, id: tagged.id, tags: { team: 'ads' }, requested_model: 'asked', batch_id: 'msgbatch_01abc' };
    const nulls: AuditEvent = { ...base, id: '0192f3a4-5b6c-7d8e-9f00-000000000012', batch_id: null };
    const nullsUsage: UsageRecord = { ...usage, id: nulls.id, batch_id: null };

    const writer = new CompactRowsWriter();
    writer.add(audit, usage);
    writer.add(tagged, taggedUsage);
    writer.add(nulls, nullsUsage);
    writer.add(null, { ...usage, id: '0192f3a4-5b6c-7d8e-9f00-000000000013' });
    writer.seal();
    // Rows of one batch share its id: one dictionary entry.
    expect(writer.dictionary.filter((v) => v === 'batch_0192f3a45b6c7d8e')).toHaveLength(1);
    const usageOut: UsageRecord[] = [];
    const auditOut: AuditEvent[] = [];
    readCompactRows(writer.dictionary, writer.rows(), usageOut, auditOut);
    expect(auditOut).toEqual([audit, tagged, nulls]);
    expect(usageOut).toEqual([usage, taggedUsage, nullsUsage, { ...usage, id: '0192f3a4-5b6c-7d8e-9f00-000000000013' }]);
  });

  it('leaves batch_id out of rows written without it, as a version 5 proxy wrote them', () => {
    const usage: UsageRecord = {
      id: base.id,
      request_id: base.request_id,
      project_id: base.project_id as string,
      key_id: base.key_id as string,
      timestamp: base.timestamp,
      model: 'mock-1',
      provider: 'mock',
      tokens: { input: 10, output: 2, total: 12 },
      latency_ms: 12,
      finish_reason: 'stop',
      stream: false,
      requested_model: 'asked',
    };
    const audit: AuditEvent = { ...base, end_user: 'u' };
    const writer = new CompactRowsWriter();
    writer.add(audit, usage);
    writer.seal();
    const usageOut: UsageRecord[] = [];
    const auditOut: AuditEvent[] = [];
    readCompactRows(writer.dictionary, writer.rows(), usageOut, auditOut);
    expect(usageOut).toEqual([usage]);
    expect(auditOut).toEqual([audit]);
    // Absent, the writer's default (null) applies, whatever the batch's version.
    expect(Object.keys(usageOut[0]!)).not.toContain('batch_id');
    expect(Object.keys(auditOut[0]!)).not.toContain('batch_id');
  });
});

describe('compact rows write a repeated UUID from the bytes of the last one', () => {
  it('keeps ids equal to request ids, new ones, a row given back and the buffer growing', () => {
    const id = (n: number) => `0192f3a4-5b6c-7d8e-9f00-${n.toString(16).padStart(12, '0')}`;
    const writer = new CompactRowsWriter();
    const events: AuditEvent[] = [];
    for (let n = 0; n < 2_000; n++) {
      const event: AuditEvent = { ...base, id: id(n), request_id: n % 3 === 0 ? `client-${n}` : id(n), user_agent: `agent ${n}` };
      writer.add(event, null);
      events.push(event);
      if (n % 50 === 0) {
        // A row the format refuses is given back whole; the UUID it wrote last must not be reused.
        expect(() => writer.add({ ...base, id: id(10_000 + n), request_id: id(10_000 + n), providers: null as unknown as string[] }, null)).toThrow();
      }
    }
    writer.seal();
    const audit: AuditEvent[] = [];
    readCompactRows(writer.dictionary, writer.rows(), [], audit);
    expect(audit).toEqual(events);
  });
});
