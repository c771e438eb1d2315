import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { checkLine, FILE_ENDPOINTS, LineTally } from './line-check.js';

const good = { custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } };

function refusal(value: unknown, line = 3): string {
  const checked = checkLine(typeof value === 'string' ? value : JSON.stringify(value), line, FILE_ENDPOINTS);
  if (!(checked instanceof GatewayError)) throw new Error('accepted');
  expect(checked.status).toBe(400);
  return checked.message;
}

describe('batch line checks', () => {
  it('accepts a request line and names its url', () => {
    expect(checkLine(JSON.stringify(good), 1, FILE_ENDPOINTS)).toEqual({ customId: 'a', url: '/v1/chat/completions' });
  });

  it('refuses what cannot run, naming the line and never quoting it', () => {
    expect(refusal('{"custom_id": "secret-text"')).toBe('Line 3 of the file: not valid JSON.');
    expect(refusal([good])).toContain('not a JSON object');
    expect(refusal({ ...good, custom_id: '' })).toContain('custom_id');
    expect(refusal({ ...good, method: 'GET' })).toContain('method');
    expect(refusal({ ...good, url: '/v1/messages' })).toContain('url');
    expect(refusal({ ...good, body: { messages: [] } })).toContain('body.model');
    expect(refusal({ ...good, body: { model: 'm', stream: true } })).toContain('body.stream');
  });

  it('tallies unique custom ids and the first line of each url', () => {
    const tally = new LineTally();
    expect(tally.add({ customId: 'a', url: '/v1/chat/completions' }, 1)).toBeNull();
    expect(tally.add({ customId: 'b', url: '/v1/embeddings' }, 2)).toBeNull();
    expect(tally.add({ customId: 'a', url: '/v1/chat/completions' }, 3)?.message).toContain('Line 3');
    expect(tally.endpoints).toEqual({ '/v1/chat/completions': 0, '/v1/embeddings': 1 });
    expect(tally.lines).toBe(2);
  });
});
