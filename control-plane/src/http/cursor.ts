import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Errors } from '@gateway/shared';
import type { SortOrder } from '../db/record-page.js';

/**
 * Opaque keyset cursors for the record lists: base64url JSON of the last row's (ts, id), the
 * order and the list it came from, followed by an HMAC. The MAC makes the cursor truly opaque: an
 * edited cursor is refused with a 400 instead of silently paging from wherever it was pointed.
 * MAC keys are derived from the JWT secrets (current and previous), so no extra secret needs
 * managing and a rotation keeps recent cursors valid.
 */
export type CursorList = 'usage' | 'audit' | 'users' | 'webhook-deliveries';

export interface CursorPosition {
  ts: number;
  id: string;
}

const MAC_BYTES = 16;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class CursorCodec {
  private readonly keys: Buffer[];

  /** `secrets`: the JWT secrets, the signing one first. */
  constructor(secrets: readonly Uint8Array[]) {
    if (secrets.length === 0) throw new Error('CursorCodec needs at least one secret');
    this.keys = secrets.map((s) => Buffer.from(hkdfSync('sha256', s, Buffer.alloc(0), 'model-gateway list cursor v1', 32)));
  }

  encode(list: CursorList, order: SortOrder, position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify({ l: list, o: order, t: position.ts, i: position.id })).toString('base64url');
    return `${payload}.${this.mac(this.keys[0] as Buffer, payload).toString('base64url')}`;
  }

  /** The position a cursor points at; 400 INVALID_REQUEST for anything this codec did not issue for this list and order. */
  decode(cursor: string, list: CursorList, order: SortOrder): CursorPosition {
    const invalid = (why: string) => Errors.badCursor(why);
    const [payload, macText, ...rest] = cursor.split('.');
    if (payload === undefined || macText === undefined || rest.length > 0) throw invalid('is not a cursor this API issued');
    const mac = Buffer.from(macText, 'base64url');
    const authentic = mac.length === MAC_BYTES && this.keys.some((key) => timingSafeEqual(this.mac(key, payload), mac));
    if (!authentic) throw invalid('is not a cursor this API issued');

    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid('is not a cursor this API issued');
    }
    const { l, o, t, i } = (parsed ?? {}) as Record<string, unknown>;
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || typeof i !== 'string' || !UUID.test(i)) throw invalid('is not a cursor this API issued');
    if (l !== list) throw invalid(`belongs to another list; start again without it`);
    if (o !== order) throw invalid(`was issued for the other sort order; keep the order while paging`);
    return { ts: t, id: i };
  }

  private mac(key: Buffer, payload: string): Buffer {
    return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}
