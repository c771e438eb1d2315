import { describe, expect, it } from 'vitest';
import { geminiStatusError, retryDelaySeconds, scrubGoogle } from './gemini-error.js';

const body = (status: number, code: string, message: string, details?: unknown[]) => JSON.stringify({ error: { code: status, status: code, message, ...(details ? { details } : {}) } });

describe('Google errors', () => {
  it('reads the wait from a RetryInfo detail, rounded up', () => {
    expect(retryDelaySeconds(body(429, 'RESOURCE_EXHAUSTED', 'x', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '4.1s' }]))).toBe(5);
    expect(retryDelaySeconds(body(429, 'RESOURCE_EXHAUSTED', 'x'))).toBeUndefined();
    expect(retryDelaySeconds('not json')).toBeUndefined();
  });

  it('prefers Retry-After over RetryInfo, and falls back to one second with neither', () => {
    const text = body(429, 'RESOURCE_EXHAUSTED', 'quota', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }]);
    expect(geminiStatusError('g', 429, text, '3', null).retryAfter).toBe(3);
    expect(geminiStatusError('g', 429, text, undefined, null).retryAfter).toBe(30);
    expect(geminiStatusError('g', 429, body(429, 'RESOURCE_EXHAUSTED', 'quota'), undefined, null).retryAfter).toBe(1);
  });

  it('maps statuses to the gateway classes', () => {
    expect(geminiStatusError('g', 400, body(400, 'FAILED_PRECONDITION', 'User location is not supported'), undefined, null)).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(geminiStatusError('g', 401, body(401, 'UNAUTHENTICATED', 'no'), undefined, null)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(geminiStatusError('g', 404, body(404, 'NOT_FOUND', 'models/x is not found'), undefined, null)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(geminiStatusError('g', 503, body(503, 'UNAVAILABLE', 'overloaded'), undefined, null)).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(geminiStatusError('g', 504, body(504, 'DEADLINE_EXCEEDED', 'slow'), undefined, null)).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
  });

  it('scrubs Google API keys and the provider key from messages', () => {
    const secret = 'my-configured-provider-key';
    expect(scrubGoogle(`bad key AIzaSyA1234567890abcdefghijklmnopqrstuv and ${secret}`, secret)).toBe('bad key [REDACTED] and [REDACTED]');
    const err = geminiStatusError('g', 400, body(400, 'INVALID_ARGUMENT', `rejected ${secret}`), undefined, secret);
    expect(err.message).not.toContain(secret);
  });
});
