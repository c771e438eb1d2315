import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeInvalidation, encodeInvalidation } from './invalidation.js';
import { decodeKeyRecord, encodeKeyRecord } from './key-record.js';
import { decodeRecordBatch, encodeRecordBatch } from './record-batch.js';
import type { AuditEvent } from './audit-event.js';
import type { UsageRecord } from './usage-record.js';
import { FINISH_REASONS, finishReasonFields, normaliseFinishReason } from './usage-record.js';
import { ContractError } from './version.js';
import { decodeProjectPolicy, encodeProjectPolicy, quotaPeriodId, quotaPeriodRange } from './project-policy.js';

const usage: UsageRecord = {
  id: '0192f3a0-0000-7000-8000-000000000001',
  request_id: 'req-1',
  project_id: '11111111-1111-4111-8111-111111111111',
  key_id: '22222222-2222-4222-8222-222222222222',
  timestamp: 1_763_000_000_000,
  model: 'mock-1',
  provider: 'mock',
  tokens: { input: 3, output: 5, total: 8, cached: 2 },
  cost_usd: 0.000_012_5,
  latency_ms: 12,
  finish_reason: 'other',
  provider_finish_reason: 'pause_turn',
  stream: false,
  endpoint: 'messages',
};
const audit: AuditEvent = {
  id: usage.id,
  request_id: 'req-1',
  timestamp: usage.timestamp,
  type: 'gateway.request',
  outcome: 'success',
  status: 200,
  error_code: null,
  project_id: usage.project_id,
  key_id: usage.key_id,
  actor: null,
  model: 'mock-1',
  provider: 'mock',
  endpoint: 'messages',
  attempts: 2,
  providers: ['flaky', 'mock'],
  client_ip: '127.0.0.1',
  user_agent: 'test',
  latency_ms: 12,
};

describe('versioned contracts', () => {
  it('round-trips a key record and refuses other versions', () => {
    const raw = encodeKeyRecord({ id: 'k', project_id: 'p', expires_at: null });
    expect(decodeKeyRecord(raw)).toEqual({ v: 1, id: 'k', project_id: 'p', expires_at: null });
    expect(() => decodeKeyRecord(raw.replace('"v":1', '"v":2'))).toThrow(ContractError);
    expect(() => decodeKeyRecord('{nope')).toThrow(ContractError);
    expect(() => decodeKeyRecord('{"v":1,"id":3,"project_id":"p"}')).toThrow(/id must be a string/);
  });

  it('round-trips an invalidation and refuses unknown kinds', () => {
    const raw = encodeInvalidation({ kind: 'key.deleted', key_hash: 'h', key_id: 'k', project_id: 'p', at: 5 });
    expect(decodeInvalidation(raw)).toEqual({ v: 1, kind: 'key.deleted', key_hash: 'h', key_id: 'k', project_id: 'p', at: 5, id: null });
    expect(() => decodeInvalidation(raw.replace('key.deleted', 'key.exploded'))).toThrow(/unknown kind/);
    // The log id rides along when the change was logged; a message without one still reads.
    const logged = encodeInvalidation({ kind: 'project.deleted', key_hash: null, key_id: null, project_id: 'p', at: 6, id: 42 });
    expect(decodeInvalidation(logged).id).toBe(42);
    expect(decodeInvalidation(JSON.stringify({ v: 1, kind: 'key.created', key_hash: 'h', key_id: null, project_id: null, at: 1 })).id).toBeNull();
    expect(() => decodeInvalidation(logged.replace('"id":42', '"id":"42"'))).toThrow(/id must be a number/);
  });

  it('round-trips a record batch of objects through msgpack, as version 2 (proxies send version 3 rows)', () => {
    const job = encodeRecordBatch([usage], [audit]);
    expect(typeof job.b).toBe('string');
    expect(decodeRecordBatch(job)).toEqual({ v: 2, usage: [usage], audit: [audit] });
    expect(() => decodeRecordBatch({ b: 'not msgpack at all' })).toThrow(ContractError);
    expect(() => decodeRecordBatch({})).toThrow(/no payload/);
  });

  // Batches as a proxy of each release wrote them (msgpack with records, as encodeRecordBatch packs).
  const packed = (batch: object) => ({ b: new Packr({ useRecords: true, moreTypes: false }).pack(batch).toString('base64') });

  it('still reads version 1 batches, records as they were sent', () => {
    const { cost_usd: _c, provider_finish_reason: _p, endpoint: _e, ...v1Usage } = { ...usage, tokens: { input: 3, output: 5, total: 8 }, finish_reason: 'stop' as const };
    const { endpoint: _ae, attempts: _a, providers: _ps, ...v1Audit } = audit;
    expect(decodeRecordBatch(packed({ v: 1, usage: [v1Usage], audit: [v1Audit] }))).toEqual({ v: 1, usage: [v1Usage], audit: [v1Audit] });
  });

  it('refuses a batch of a newer version, or of none', () => {
    expect(() => decodeRecordBatch(packed({ v: 7, usage: [], audit: [] }))).toThrow(ContractError);
    expect(() => decodeRecordBatch(packed({ v: 7, usage: [], audit: [] }))).toThrow(/unsupported version 7 \(this build reads 1, 2, 3, 4, 5, 6\)/);
    expect(() => decodeRecordBatch(packed({ usage: [], audit: [] }))).toThrow(/unsupported version undefined/);
    expect(() => decodeRecordBatch(packed({ v: 2, usage: {}, audit: [] }))).toThrow(/must be arrays/);
  });

  it("maps provider finish reasons onto the gateway's set, keeping unknown ones as other", () => {
    expect(normaliseFinishReason('length')).toBe('max_tokens');
    expect(normaliseFinishReason('tool_calls')).toBe('tool_calls');
    expect(normaliseFinishReason('tool_use')).toBe('tool_calls');
    expect(normaliseFinishReason('content_filter')).toBe('content_filter');
    expect(normaliseFinishReason('stop')).toBe('stop');
    expect(normaliseFinishReason('end_turn')).toBe('stop');
    expect(normaliseFinishReason(null)).toBe('stop');
    expect(normaliseFinishReason('pause_turn')).toBe('other');
    expect(FINISH_REASONS).toContain('other');
    expect(finishReasonFields('pause_turn')).toEqual({ finish_reason: 'other', provider_finish_reason: 'pause_turn' });
    expect(finishReasonFields('length')).toEqual({ finish_reason: 'max_tokens', provider_finish_reason: null });
    expect(finishReasonFields(undefined)).toEqual({ finish_reason: 'stop', provider_finish_reason: null });
  });

  it('round-trips a project policy and refuses malformed limits', () => {
    const policy = {
      id: 'p',
      quota_tokens: 1000,
      quota_period: 'month' as const,
      rate_limits: { key_rpm: 10, key_tpm: null, project_rpm: null, project_tpm: 5000 },
      allowed_models: ['a'],
      max_tokens_cap: 256,
    };
    const raw = encodeProjectPolicy(policy);
    expect(decodeProjectPolicy(raw)).toEqual({ v: 1, ...policy });
    expect(() => decodeProjectPolicy(raw.replace('"v":1', '"v":3'))).toThrow(ContractError);
    expect(() => decodeProjectPolicy(raw.replace('"quota_tokens":1000', '"quota_tokens":-1'))).toThrow(/quota_tokens/);
    expect(() => decodeProjectPolicy(raw.replace('"month"', '"week"'))).toThrow(/quota_period/);
  });

  it('carries a project\'s MCP setting in its policy, and leaves it out when there is none', () => {
    const base = { id: 'p', quota_tokens: null, quota_period: 'total' as const, rate_limits: { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null }, allowed_models: null, max_tokens_cap: null };
    const mcp = { servers: { docs: { tools: '*' as const }, tickets: { tools: ['search', 'get'] } } };
    expect(decodeProjectPolicy(encodeProjectPolicy({ ...base, mcp })).mcp).toEqual(mcp);
    expect(encodeProjectPolicy({ ...base, mcp: null })).not.toContain('mcp');
    expect(decodeProjectPolicy(encodeProjectPolicy(base)).mcp).toBeUndefined();
    expect(() => decodeProjectPolicy(encodeProjectPolicy({ ...base, mcp }).replace('"*"', '"all"'))).toThrow(/mcp.servers.docs.tools/);
    const opted = { servers: { docs: { tools: '*' as const, prompts: ['summary'], resources: '*' as const } } };
    expect(decodeProjectPolicy(encodeProjectPolicy({ ...base, mcp: opted })).mcp).toEqual(opted);
    expect(() => decodeProjectPolicy(encodeProjectPolicy({ ...base, mcp: opted }).replace('["summary"]', '7'))).toThrow(/mcp.servers.docs.prompts/);
  });

  it("carries a project's unsupported_params only when refuse, and refuses another value", () => {
    const base = { id: 'p', quota_tokens: null, quota_period: 'total' as const, rate_limits: { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null }, allowed_models: null, max_tokens_cap: null };
    const refusing = encodeProjectPolicy({ ...base, unsupported_params: 'refuse' });
    expect(decodeProjectPolicy(refusing)).toEqual({ v: 1, ...base, unsupported_params: 'refuse' });
    // Drop is the default: not written, so a proxy that predates the setting reads the same policy.
    expect(encodeProjectPolicy({ ...base, unsupported_params: 'drop' })).toBe(encodeProjectPolicy(base));
    expect(encodeProjectPolicy({ ...base, unsupported_params: null })).not.toContain('unsupported_params');
    expect(decodeProjectPolicy(encodeProjectPolicy(base)).unsupported_params).toBeUndefined();
    expect(decodeProjectPolicy(refusing.replace('"refuse"', '"drop"')).unsupported_params).toBe('drop');
    expect(decodeProjectPolicy(refusing.replace('"refuse"', 'null')).unsupported_params).toBeUndefined();
    for (const bad of ['"reject"', '"REFUSE"', '""', 'true', '1', '["refuse"]']) {
      expect(() => decodeProjectPolicy(refusing.replace('"refuse"', bad)), bad).toThrow(ContractError);
      expect(() => decodeProjectPolicy(refusing.replace('"refuse"', bad)), bad).toThrow(/unsupported_params must be drop, refuse or null/);
    }
  });

  it('names quota periods and their time ranges', () => {
    const now = Date.UTC(2026, 10, 22, 12);
    expect(quotaPeriodId('total', now)).toBe('total');
    expect(quotaPeriodId('month', now)).toBe('m202611');
    expect(quotaPeriodRange('m202611')).toEqual({ from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1) });
    expect(quotaPeriodRange('m202612').to).toBe(Date.UTC(2027, 0, 1));
  });
});
