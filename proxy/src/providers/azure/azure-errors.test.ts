import { describe, expect, it } from 'vitest';
import { azureRetryAfter, contentFilterRefusal } from './azure-errors.js';

const headers = (h: Record<string, string>) => (name: string) => h[name];

describe('azure errors', () => {
  it('reads retry-after-ms in whole seconds, else retry-after', () => {
    expect(azureRetryAfter(headers({ 'retry-after-ms': '2500', 'retry-after': '9' }))).toBe('3');
    expect(azureRetryAfter(headers({ 'retry-after-ms': '12000.5' }))).toBe('13');
    expect(azureRetryAfter(headers({ 'retry-after-ms': 'soon', 'retry-after': '9' }))).toBe('9');
    expect(azureRetryAfter(headers({ 'retry-after': '4' }))).toBe('4');
    expect(azureRetryAfter(headers({}))).toBeUndefined();
  });

  it('recognises only a content_filter error code, and scrubs its message', () => {
    const refused = contentFilterRefusal('az', JSON.stringify({ error: { code: 'content_filter', message: 'filtered for sk-abcdefghijkl', param: 'prompt' } }));
    expect(refused).toMatchObject({ code: 'INVALID_REQUEST', param: 'messages' });
    expect(refused?.message).toBe('Provider az refused the request: filtered for [REDACTED]');
    expect(contentFilterRefusal('az', JSON.stringify({ error: { code: 'BadRequest', message: 'x' } }))).toBeNull();
    expect(contentFilterRefusal('az', 'content_filter')).toBeNull();
    expect(contentFilterRefusal('az', 'null')).toBeNull();
  });
});
