import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '@gateway/shared';
import { extrasOf, type RequestExtras } from './request-extras.js';
import { auditEvent, costUsd, usageRecord, type RequestIdentity, type UsageOutcome } from './request-records.js';

const usage = (over: Partial<UsageOutcome>): UsageOutcome => ({
  input: 0,
  output: 0,
  cached: 0,
  cacheWrite: 0,
  finishReason: 'stop',
  rawFinishReason: null,
  stream: false,
  price: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
  ...over,
});

describe('costUsd', () => {
  it('prices the prompt read from the cache, written to it and the rest apart', () => {
    // 1,000 prompt tokens: 600 read from the cache, 300 written to it, 100 plain; 50 output.
    expect(costUsd(usage({ input: 1_000, cached: 600, cacheWrite: 300, output: 50 }))).toBeCloseTo((100 * 3 + 600 * 0.3 + 300 * 3.75 + 50 * 15) / 1e6, 12);
  });

  it('prices writes as input when the price list has no cache_write of its own', () => {
    const price = { input: 3, output: 15, cached_input: 0.3, cache_write: 3 };
    expect(costUsd(usage({ input: 1_000, cacheWrite: 400, price }))).toBe(costUsd(usage({ input: 1_000, price })));
  });

  it('never prices more cached and written tokens than the prompt holds', () => {
    expect(costUsd(usage({ input: 100, cached: 80, cacheWrite: 80 }))).toBeCloseTo((80 * 0.3 + 20 * 3.75) / 1e6, 12);
  });

  it('is null without a price', () => {
    expect(costUsd(usage({ input: 10, price: null }))).toBeNull();
  });
});

describe('records of a batch line', () => {
  const key: KeyRecord = { v: 1, id: '0192f3a4-5b6c-7d8e-9f00-bbbbbbbbbbbb', project_id: '0192f3a4-5b6c-7d8e-9f00-aaaaaaaaaaaa', expires_at: null };
  const call = (extras: RequestExtras | null): RequestIdentity => ({
    id: '0192f3a4-5b6c-7d8e-9f00-112233445566',
    info: { requestId: 'req-1', clientIp: '127.0.0.1', userAgent: 'test' },
    model: 'mock-1',
    provider: 'mock',
    endpoint: 'chat.completions',
    attempts: 1,
    tried: ['mock'],
    coolingProviders: null,
    extras,
  });
  const NOW = 1_764_000_000_999;
  const records = (c: RequestIdentity) => ({
    audit: auditEvent(c, key, 'success', 200, null, NOW, 12),
    usage: usageRecord(c, key, 'mock-1', 'mock', usage({ input: 3, output: 5 }), NOW, 12),
  });

  it("carry the batch id and the runner's timestamp instead of the time the request finished", () => {
    const holder: { extras: RequestExtras | null } = { extras: null };
    const extras = extrasOf(holder);
    expect(extras).toMatchObject({ batchId: null, recordTs: null });
    extras.batchId = 'batch_0192f3a45b6c';
    extras.recordTs = 1_700_000_000_000;
    const { audit, usage: record } = records(call(extras));
    expect(audit).toMatchObject({ timestamp: 1_700_000_000_000, batch_id: 'batch_0192f3a45b6c' });
    expect(record).toMatchObject({ timestamp: 1_700_000_000_000, batch_id: 'batch_0192f3a45b6c', latency_ms: 12 });
  });

  it('keep the time the request finished, and no batch id, for any other request', () => {
    const tagged = extrasOf({ extras: null });
    tagged.endUser = 'u';
    for (const extras of [null, tagged]) {
      const { audit, usage: record } = records(call(extras));
      expect(audit.timestamp).toBe(NOW);
      expect(record.timestamp).toBe(NOW);
      expect(Object.keys(audit)).not.toContain('batch_id');
      expect(Object.keys(record)).not.toContain('batch_id');
    }
  });
});
