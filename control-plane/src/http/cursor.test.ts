import { describe, expect, it } from 'vitest';
import { GatewayError } from '@gateway/shared';
import { CursorCodec } from './cursor.js';

const key = (s: string) => new TextEncoder().encode(s);
const codec = new CursorCodec([key('current-secret-of-sufficient-length!')]);
const position = { ts: 1_763_000_000_123, id: '0192f3a0-0000-7000-8000-000000000001' };

function refused(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_REQUEST');
    expect((err as GatewayError).param).toBe('cursor');
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('list cursors', () => {
  it('round-trips the position of the last row', () => {
    const cursor = codec.encode('usage', 'desc', position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(codec.decode(cursor, 'usage', 'desc')).toEqual(position);
  });

  it('refuses any edit, even one that still decodes', () => {
    const cursor = codec.encode('usage', 'desc', position);
    const [payload, mac] = cursor.split('.') as [string, string];
    const moved = Buffer.from(JSON.stringify({ l: 'usage', o: 'desc', t: position.ts + 1, i: position.id })).toString('base64url');
    refused(() => codec.decode(`${moved}.${mac}`, 'usage', 'desc'));
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    refused(() => codec.decode(`${payload}.${flipped}`, 'usage', 'desc'));
    refused(() => codec.decode(payload, 'usage', 'desc'));
    refused(() => codec.decode(`${cursor}.x`, 'usage', 'desc'));
    refused(() => codec.decode('%%%', 'usage', 'desc'));
  });

  it('belongs to one list and one order', () => {
    expect(refused(() => codec.decode(codec.encode('usage', 'desc', position), 'audit', 'desc')).message).toMatch(/another list/);
    expect(refused(() => codec.decode(codec.encode('usage', 'desc', position), 'usage', 'asc')).message).toMatch(/sort order/);
  });

  it('keeps cursors valid across a secret rotation, and only then', () => {
    const old = new CursorCodec([key('an-older-secret-of-sufficient-length')]);
    const cursor = old.encode('audit', 'asc', position);
    const rotated = new CursorCodec([key('current-secret-of-sufficient-length!'), key('an-older-secret-of-sufficient-length')]);
    expect(rotated.decode(cursor, 'audit', 'asc')).toEqual(position);
    refused(() => codec.decode(cursor, 'audit', 'asc'));
  });
});
