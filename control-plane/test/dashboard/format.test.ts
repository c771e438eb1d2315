import { describe, expect, it } from 'vitest';
import { apiErrorFrom, ApiError, describeError } from '../../dashboard/src/api/api-error.js';
import { formatCompact, formatCost, formatDateTime, formatLatency, formatNumber, formatRelative, parseQuota, quotaUse, shortId } from '../../dashboard/src/lib/format.js';

describe('numbers and times', () => {
  it('groups thousands and compacts axis labels', () => {
    expect(formatNumber(1234567)).toBe('1,234,567');
    expect([0, 950, 1000, 12_345, 999_999, 4_500_000, 2_000_000_000].map(formatCompact)).toEqual(['0', '950', '1k', '12.3k', '1000k', '4.5M', '2B']);
  });

  it('writes dates as local YYYY-MM-DD HH:mm:ss, and a dash for none', () => {
    const ms = new Date(2025, 0, 2, 3, 4, 5).getTime();
    expect(formatDateTime(ms)).toBe('2025-01-02 03:04:05');
    expect(formatDateTime(new Date(ms).toISOString())).toBe('2025-01-02 03:04:05');
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime('not a date')).toBe('—');
  });

  it('says how long ago, and "never" for a key not used yet', () => {
    const now = Date.UTC(2025, 5, 1, 12);
    expect(formatRelative(null, now)).toBe('never');
    expect(formatRelative(now - 10_000, now)).toBe('just now');
    expect(formatRelative(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(formatRelative(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(formatRelative(now - 26 * 3_600_000, now)).toBe('1 day ago');
    expect(formatRelative(new Date(now - 3 * 86_400_000).toISOString(), now)).toBe('3 days ago');
    expect(formatRelative(now + 60_000, now)).toBe('in the future');
  });

  it('writes latency in ms below a second', () => {
    expect([12, 999, 1234, 15_000].map(formatLatency)).toEqual(['12 ms', '999 ms', '1.23 s', '15.0 s']);
  });

  it('writes costs in dollars, sub-cent ones to two significant digits, and a dash for no price', () => {
    expect([1234.5, 12.345, 1, 0.5, 0.0042, 0.0000195, 0.0000002, 0].map(formatCost)).toEqual([
      '$1,234.50',
      '$12.35',
      '$1.00',
      '$0.50',
      '$0.0042',
      '$0.000020',
      '$0.00000020',
      '$0.00',
    ]);
    expect(formatCost(null)).toBe('—');
  });

  it('shortens ids for display', () => {
    expect(shortId('0d3c9a57-1b7e-4c8a-9f1e-2a3b4c5d6e7f')).toBe('0d3c9a57…');
    expect(shortId(null)).toBe('—');
  });
});

describe('quota use', () => {
  it('says "unlimited" without a quota and draws no bar', () => {
    expect(quotaUse({ quota_tokens: null, used_tokens: 1500 })).toEqual({ fraction: null, level: 'none', label: '1,500 tokens used · unlimited' });
  });

  it('gives the share used, turning amber at 80% and red, in words too, when exhausted', () => {
    expect(quotaUse({ quota_tokens: 10_000, used_tokens: 1_234 })).toEqual({ fraction: 0.1234, level: 'ok', label: '1,234 of 10,000 tokens (12%)' });
    expect(quotaUse({ quota_tokens: 10_000, used_tokens: 8_000 }).level).toBe('high');
    expect(quotaUse({ quota_tokens: 10_000, used_tokens: 12_000 })).toEqual({
      fraction: 1,
      level: 'exhausted',
      label: '12,000 of 10,000 tokens (120%) · quota exhausted',
    });
    expect(quotaUse({ quota_tokens: 1_000_000, used_tokens: 3 }).label).toBe('3 of 1,000,000 tokens (<1%)');
    expect(quotaUse({ quota_tokens: 0, used_tokens: 0 }).level).toBe('exhausted');
    expect(quotaUse({ quota_tokens: 1_000, used_tokens: 500, quota_period: 'month' }).label).toBe('500 of 1,000 tokens this month (50%)');
  });

  it('reads the quota field: empty for none, separators allowed, nothing else', () => {
    expect(parseQuota('')).toEqual({ ok: true, value: null });
    expect(parseQuota('  ')).toEqual({ ok: true, value: null });
    expect(parseQuota('1,000,000')).toEqual({ ok: true, value: 1_000_000 });
    expect(parseQuota('1 000_000')).toEqual({ ok: true, value: 1_000_000 });
    expect(parseQuota('0')).toEqual({ ok: true, value: 0 });
    expect(parseQuota('-5').ok).toBe(false);
    expect(parseQuota('1.5').ok).toBe(false);
    expect(parseQuota('1e6').ok).toBe(false);
    expect(parseQuota('99999999999999999999').ok).toBe(false);
  });
});

describe('errors', () => {
  it('reads the OpenAI error shape, and survives any other body', () => {
    const err = apiErrorFrom(429, { error: { message: 'Too many failed sign-ins; retry later.', type: 'rate_limit_error', param: null, code: 'RATE_LIMITED' } }, '120');
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: 120 });
    expect(apiErrorFrom(502, '<html>bad gateway</html>', null)).toMatchObject({ status: 502, code: 'HTTP_502', message: 'The control plane answered 502.' });
  });

  it('words a refusal so the reader knows what to do', () => {
    expect(describeError(new ApiError(403, 'FORBIDDEN', 'A viewer may not manage members.'), 'Adding the member failed')).toBe(
      'Adding the member failed: not allowed for your role. A viewer may not manage members. (403 FORBIDDEN)',
    );
    expect(describeError(new ApiError(0, 'NETWORK', 'fetch failed'))).toBe('the control plane cannot be reached. Check the connection and retry.');
    expect(describeError(new ApiError(429, 'RATE_LIMITED', 'Too many failed sign-ins; retry later.', { retryAfter: 600 }))).toBe(
      'Too many failed sign-ins; retry later. Retry in 10 min. (429 RATE_LIMITED)',
    );
    expect(describeError(new ApiError(409, 'CONFLICT', 'A project must keep an owner.'))).toBe('A project must keep an owner. (409 CONFLICT)');
  });
});
