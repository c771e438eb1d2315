import type { AuditEvent, GuardrailDecision } from './audit-event.js';
import type { UsageRecord } from './usage-record.js';

/**
 * The rows of a version 3 record batch: one row per request, its audit event and its usage record
 * together, written into one growing byte buffer. A row holds no string the batch has seen before:
 * project and key ids, models, providers, endpoints, outcomes, user agents and client addresses
 * are indices into the segment's dictionary (sent once per segment beside the rows). Record and
 * request ids are 16 bytes when they are canonical UUIDs. Usage fields equal to the audit event's
 * (ids, time, model, provider, latency) are not written twice.
 *
 * A proxy encodes each request's records here once the request is over and keeps only these bytes
 * until a writer has the batch; the writer reads them back into the same objects it always
 * received (`readCompactRows`) and checks them as before. Optional fields keep their absence, so
 * the defaults of batch version 2 apply to version 3 records alike.
 *
 * Row layout (numbers little-endian; "dict" is a varint index into the dictionary; "uid" is a byte
 * 16 then 16 bytes, or a byte 0 then a varint length and UTF-8; "num" is a byte 0 then a varint, or
 * a byte 1 then a float64):
 *   u8 parts (1: audit, 2: usage)
 *   audit: uid id, uid request_id, f64 timestamp, dict type, dict outcome, num status,
 *          dict error_code, dict project_id, dict key_id, dict actor, dict model, dict provider,
 *          dict client_ip, dict user_agent, num latency_ms,
 *          u8 present (1: endpoint, 2: attempts, 4: providers, 8: count, 16: skipped, 32: mcp,
 *          64: attribution) then
 *          dict endpoint, num attempts, varint n + n × dict providers, num count, varint n + n × dict
 *          skipped, (u8 0 | u8 1 dict server, dict tool, dict method) mcp, each when present;
 *          attribution (version 4): u8 has (1: tags, 2: end_user, 4: cache, 8: guardrails,
 *          16: batch_id, version 6) then dict tags (the object itself: a key's default tags are one
 *          entry however many rows share them), dict end_user, dict cache, varint n + n × (dict id,
 *          dict stage, dict action, u8 failed) guardrails, dict batch_id, each when present
 *   usage: u8 same (bits 0–7: id, request_id, project_id, key_id, timestamp, model, provider,
 *          latency_ms equal to the audit event's), then uid id, uid request_id, dict project_id,
 *          dict key_id, f64 timestamp, dict model, dict provider, num latency_ms, each unless same;
 *          num input, num output, num total, dict finish_reason, u8 stream,
 *          u8 present (1: cached, 2: cost_usd, 4: provider_finish_reason, 8: endpoint, 16: cache_write,
 *          32: attribution) then
 *          num cached, (u8 0 | u8 1 f64) cost_usd, dict provider_finish_reason, dict endpoint,
 *          num cache_write, each when present; attribution (version 4): u8 has (1: tags, 2: end_user,
 *          4: cache_hit, 8: saved_usd, 16: requested_model, version 5, 32: batch_id, version 6) then
 *          dict tags, dict end_user, (u8 0 | u8 1 f64) saved_usd, dict requested_model, dict
 *          batch_id, each when present (cache_hit is the bit itself)
 *
 * Version 4 rows are version 3 rows that may set the bits added with it, and so on for 5 and 6; a
 * reader of an older version stops at the version, never misreads (record-batch.ts).
 */
const AUDIT_PART = 1;
const USAGE_PART = 2;

const SAME_ID = 1;
const SAME_REQUEST_ID = 2;
const SAME_PROJECT = 4;
const SAME_KEY = 8;
const SAME_TIME = 16;
const SAME_MODEL = 32;
const SAME_PROVIDER = 64;
const SAME_LATENCY = 128;

const INITIAL_BYTES = 8 * 1024;

/** The value of each lower-case hex digit by character code; 255 for any other character. */
const HEX_VALUE = new Uint8Array(256).fill(255);
for (let c = 0; c < 16; c++) HEX_VALUE[c.toString(16).charCodeAt(0)] = c;

/** Where a canonical UUID's 32 hex digits are, in order (the hyphens skipped). */
const UUID_DIGITS = Uint8Array.from([...'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'].flatMap((c, i) => (c === 'x' ? [i] : [])));

/** One segment's rows and dictionary, growing as rows are added. */
export class CompactRowsWriter {
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private pos = 0;
  /** Byte offset of each row, and the records (1 or 2) it holds. */
  private readonly starts: number[] = [];
  private readonly counts: number[] = [];
  /** First row still held (older ones were dropped). */
  private first = 0;
  private held = 0;
  readonly dictionary: unknown[] = [];
  private index: Map<unknown, number> | null = new Map<unknown, number>();
  /** The UUID written last and where its 16 bytes are. */
  private lastUuid = '';
  private lastUuidAt = 0;

  /** Records (not rows) held. */
  get records(): number {
    return this.held;
  }

  /**
   * Appends one request's row. Throws, leaving the segment as it was, for a value the format
   * cannot carry (only a bug could put one in a record).
   */
  add(audit: AuditEvent | null, usage: UsageRecord | null): void {
    if (this.index === null) throw new Error('rows added to a sealed segment');
    const start = this.pos;
    const dictionaryLength = this.dictionary.length;
    try {
      this.u8((audit === null ? 0 : AUDIT_PART) | (usage === null ? 0 : USAGE_PART));
      if (audit !== null) this.audit(audit);
      if (usage !== null) this.usage(usage, audit);
    } catch (err) {
      this.pos = start;
      // The bytes a remembered UUID points at may be among those given back.
      this.lastUuid = '';
      for (let i = dictionaryLength; i < this.dictionary.length; i++) this.index.delete(this.dictionary[i]);
      this.dictionary.length = dictionaryLength;
      throw err;
    }
    const n = (audit === null ? 0 : 1) + (usage === null ? 0 : 1);
    this.starts.push(start);
    this.counts.push(n);
    this.held += n;
  }

  /**
   * No more rows will come: the buffer shrinks to the rows' size and the dictionary's lookup
   * table goes, so a segment kept for long (unsent while Redis is away, or unconfirmed) holds
   * its bytes and nothing more.
   */
  seal(): void {
    if (this.index === null) return;
    this.index = null;
    if (this.buf.length > this.pos) this.buf = Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Drops the oldest rows, at least one, until `max` records are gone or none is left; how many records went. */
  dropOldest(max: number): number {
    let dropped = 0;
    while (this.first < this.starts.length && (dropped === 0 || dropped + (this.counts[this.first] as number) <= max)) {
      dropped += this.counts[this.first] as number;
      this.first++;
    }
    this.held -= dropped;
    return dropped;
  }

  /** The rows held, as bytes (a view, not a copy). */
  rows(): Buffer {
    const from = this.first < this.starts.length ? (this.starts[this.first] as number) : this.pos;
    return this.buf.subarray(from, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  private u8(n: number): void {
    this.room(1);
    this.buf[this.pos++] = n;
  }

  private varint(n: number): void {
    this.room(8);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }

  private f64(n: number): void {
    this.room(8);
    this.pos = this.buf.writeDoubleLE(n, this.pos);
  }

  private num(n: number): void {
    if (Number.isInteger(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER) {
      this.u8(0);
      this.varint(n);
    } else {
      this.u8(1);
      this.f64(n);
    }
  }

  private dict(value: unknown): void {
    const index = this.index as Map<unknown, number>;
    let i = index.get(value);
    if (i === undefined) {
      i = this.dictionary.length;
      this.dictionary.push(value);
      index.set(value, i);
    }
    this.varint(i);
  }

  private uid(value: string): void {
    if (typeof value === 'string' && value.length === 36 && this.uuid(value)) return;
    this.u8(0);
    const bytes = Buffer.byteLength(value);
    this.varint(bytes);
    this.room(bytes);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  /** A canonical lower-case UUID as its 16 bytes; false (nothing written) for anything else. */
  private uuid(s: string): boolean {
    // An audit event's id is usually its request id too: the second is copied from the first.
    if (s === this.lastUuid) {
      this.room(17);
      this.buf[this.pos] = 16;
      this.buf.copy(this.buf, this.pos + 1, this.lastUuidAt, this.lastUuidAt + 16);
      this.pos += 17;
      return true;
    }
    if (s.charCodeAt(8) !== 45 || s.charCodeAt(13) !== 45 || s.charCodeAt(18) !== 45 || s.charCodeAt(23) !== 45) return false;
    this.room(17);
    const at = this.pos + 1;
    for (let j = 0; j < 16; j++) {
      // charCodeAt past 255 (any non-Latin-1 character) reads as undefined: not a digit either.
      const hi = HEX_VALUE[s.charCodeAt(UUID_DIGITS[2 * j]!)] ?? 255;
      const lo = HEX_VALUE[s.charCodeAt(UUID_DIGITS[2 * j + 1]!)] ?? 255;
      if ((hi | lo) > 15) return false;
      this.buf[at + j] = hi * 16 + lo;
    }
    this.buf[this.pos] = 16;
    this.lastUuid = s;
    this.lastUuidAt = at;
    this.pos += 17;
    return true;
  }

  private audit(a: AuditEvent): void {
    this.uid(a.id);
    this.uid(a.request_id);
    this.f64(a.timestamp);
    this.dict(a.type);
    this.dict(a.outcome);
    this.num(a.status);
    this.dict(a.error_code);
    this.dict(a.project_id);
    this.dict(a.key_id);
    this.dict(a.actor);
    this.dict(a.model);
    this.dict(a.provider);
    this.dict(a.client_ip);
    this.dict(a.user_agent);
    this.num(a.latency_ms);
    const present =
      (a.endpoint !== undefined ? 1 : 0) |
      (a.attempts !== undefined ? 2 : 0) |
      (a.providers !== undefined ? 4 : 0) |
      (a.count !== undefined ? 8 : 0) |
      (a.skipped !== undefined ? 16 : 0) |
      (a.mcp !== undefined ? 32 : 0) |
      (a.tags !== undefined || a.end_user !== undefined || a.cache !== undefined || a.guardrails !== undefined || a.batch_id !== undefined ? 64 : 0);
    this.u8(present);
    if (a.endpoint !== undefined) this.dict(a.endpoint);
    if (a.attempts !== undefined) this.num(a.attempts);
    if (a.providers !== undefined) {
      this.varint(a.providers.length);
      for (const p of a.providers) this.dict(p);
    }
    if (a.count !== undefined) this.num(a.count);
    if (a.skipped !== undefined) {
      this.varint(a.skipped.length);
      for (const p of a.skipped) this.dict(p);
    }
    if (a.mcp !== undefined) {
      if (a.mcp === null) this.u8(0);
      else {
        this.u8(1);
        this.dict(a.mcp.server);
        this.dict(a.mcp.tool);
        this.dict(a.mcp.method);
      }
    }
    if ((present & 64) !== 0) {
      this.u8(
        (a.tags !== undefined ? 1 : 0) | (a.end_user !== undefined ? 2 : 0) | (a.cache !== undefined ? 4 : 0) | (a.guardrails !== undefined ? 8 : 0) | (a.batch_id !== undefined ? 16 : 0),
      );
      if (a.tags !== undefined) this.dict(a.tags);
      if (a.end_user !== undefined) this.dict(a.end_user);
      if (a.cache !== undefined) this.dict(a.cache);
      if (a.guardrails !== undefined) {
        this.varint(a.guardrails.length);
        for (const g of a.guardrails) {
          this.dict(g.id);
          this.dict(g.stage);
          this.dict(g.action);
          this.u8(g.failed === true ? 1 : 0);
        }
      }
      if (a.batch_id !== undefined) this.dict(a.batch_id);
    }
  }

  private usage(u: UsageRecord, a: AuditEvent | null): void {
    let same = 0;
    if (a !== null) {
      if (u.id === a.id) same |= SAME_ID;
      if (u.request_id === a.request_id) same |= SAME_REQUEST_ID;
      if (u.project_id === a.project_id) same |= SAME_PROJECT;
      if (u.key_id === a.key_id) same |= SAME_KEY;
      if (u.timestamp === a.timestamp) same |= SAME_TIME;
      if (u.model === a.model) same |= SAME_MODEL;
      if (u.provider === a.provider) same |= SAME_PROVIDER;
      if (u.latency_ms === a.latency_ms) same |= SAME_LATENCY;
    }
    this.u8(same);
    if ((same & SAME_ID) === 0) this.uid(u.id);
    if ((same & SAME_REQUEST_ID) === 0) this.uid(u.request_id);
    if ((same & SAME_PROJECT) === 0) this.dict(u.project_id);
    if ((same & SAME_KEY) === 0) this.dict(u.key_id);
    if ((same & SAME_TIME) === 0) this.f64(u.timestamp);
    if ((same & SAME_MODEL) === 0) this.dict(u.model);
    if ((same & SAME_PROVIDER) === 0) this.dict(u.provider);
    if ((same & SAME_LATENCY) === 0) this.num(u.latency_ms);
    const t = u.tokens;
    this.num(t.input);
    this.num(t.output);
    this.num(t.total);
    this.dict(u.finish_reason);
    this.u8(u.stream ? 1 : 0);
    const attribution =
      u.tags !== undefined || u.end_user !== undefined || u.cache_hit === true || u.saved_usd !== undefined || u.requested_model !== undefined || u.batch_id !== undefined;
    const present =
      (t.cached !== undefined ? 1 : 0) |
      (u.cost_usd !== undefined ? 2 : 0) |
      (u.provider_finish_reason !== undefined ? 4 : 0) |
      (u.endpoint !== undefined ? 8 : 0) |
      (t.cache_write !== undefined ? 16 : 0) |
      (attribution ? 32 : 0);
    this.u8(present);
    if (t.cached !== undefined) this.num(t.cached);
    if (u.cost_usd !== undefined) {
      if (u.cost_usd === null) this.u8(0);
      else {
        this.u8(1);
        this.f64(u.cost_usd);
      }
    }
    if (u.provider_finish_reason !== undefined) this.dict(u.provider_finish_reason);
    if (u.endpoint !== undefined) this.dict(u.endpoint);
    if (t.cache_write !== undefined) this.num(t.cache_write);
    if (attribution) {
      this.u8(
        (u.tags !== undefined ? 1 : 0) |
          (u.end_user !== undefined ? 2 : 0) |
          (u.cache_hit === true ? 4 : 0) |
          (u.saved_usd !== undefined ? 8 : 0) |
          (u.requested_model !== undefined ? 16 : 0) |
          (u.batch_id !== undefined ? 32 : 0),
      );
      if (u.tags !== undefined) this.dict(u.tags);
      if (u.end_user !== undefined) this.dict(u.end_user);
      if (u.saved_usd !== undefined) {
        if (u.saved_usd === null) this.u8(0);
        else {
          this.u8(1);
          this.f64(u.saved_usd);
        }
      }
      if (u.requested_model !== undefined) this.dict(u.requested_model);
      if (u.batch_id !== undefined) this.dict(u.batch_id);
    }
  }
}

/** Reads a segment back into the records it was written from; throws on bytes that do not parse. */
export function readCompactRows(dictionary: readonly unknown[], rows: Uint8Array, usage: UsageRecord[], audit: AuditEvent[]): void {
  const buf = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
  let pos = 0;
  const need = (n: number) => {
    if (pos + n > buf.length) throw new RangeError('record rows end inside a row');
  };
  const u8 = () => {
    need(1);
    return buf[pos++] as number;
  };
  const varint = () => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = u8();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new RangeError('varint too long');
    }
  };
  const f64 = () => {
    need(8);
    const v = buf.readDoubleLE(pos);
    pos += 8;
    return v;
  };
  const num = () => (u8() === 0 ? varint() : f64());
  const dict = <T>(): T => {
    const i = varint();
    if (i >= dictionary.length) throw new RangeError('dictionary index out of range');
    return dictionary[i] as T;
  };
  const uid = (): string => {
    const tag = u8();
    if (tag === 16) {
      need(16);
      const hex = buf.toString('hex', pos, pos + 16);
      pos += 16;
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    if (tag !== 0) throw new RangeError('unknown id form');
    const n = varint();
    need(n);
    const s = buf.toString('utf8', pos, pos + n);
    pos += n;
    return s;
  };

  while (pos < buf.length) {
    const parts = u8();
    if ((parts & ~(AUDIT_PART | USAGE_PART)) !== 0 || parts === 0) throw new RangeError('unknown row parts');
    let a: AuditEvent | null = null;
    if ((parts & AUDIT_PART) !== 0) {
      const event: AuditEvent = {
        id: uid(),
        request_id: uid(),
        timestamp: f64(),
        type: dict(),
        outcome: dict(),
        status: num(),
        error_code: dict(),
        project_id: dict(),
        key_id: dict(),
        actor: dict(),
        model: dict(),
        provider: dict(),
        client_ip: dict(),
        user_agent: dict(),
        latency_ms: num(),
      };
      const present = u8();
      if ((present & 1) !== 0) event.endpoint = dict();
      if ((present & 2) !== 0) event.attempts = num();
      if ((present & 4) !== 0) {
        const n = varint();
        const providers: string[] = [];
        for (let i = 0; i < n; i++) providers.push(dict());
        event.providers = providers;
      }
      if ((present & 8) !== 0) event.count = num();
      if ((present & 16) !== 0) {
        const n = varint();
        const skipped: string[] = [];
        for (let i = 0; i < n; i++) skipped.push(dict());
        event.skipped = skipped;
      }
      if ((present & 32) !== 0) event.mcp = u8() === 0 ? null : { server: dict(), tool: dict(), method: dict() };
      if ((present & 64) !== 0) {
        const has = u8();
        if ((has & 1) !== 0) event.tags = dict();
        if ((has & 2) !== 0) event.end_user = dict();
        if ((has & 4) !== 0) event.cache = dict();
        if ((has & 8) !== 0) {
          const n = varint();
          const decisions: GuardrailDecision[] = [];
          for (let i = 0; i < n; i++) {
            const decision: GuardrailDecision = { id: dict(), stage: dict(), action: dict() };
            if (u8() === 1) decision.failed = true;
            decisions.push(decision);
          }
          event.guardrails = decisions;
        }
        if ((has & 16) !== 0) event.batch_id = dict();
      }
      audit.push(event);
      a = event;
    }
    if ((parts & USAGE_PART) !== 0) {
      const same = u8();
      if (same !== 0 && a === null) throw new RangeError('usage refers to an audit event the row lacks');
      const id = (same & SAME_ID) !== 0 ? (a as AuditEvent).id : uid();
      const request_id = (same & SAME_REQUEST_ID) !== 0 ? (a as AuditEvent).request_id : uid();
      const project_id = (same & SAME_PROJECT) !== 0 ? ((a as AuditEvent).project_id as string) : dict<string>();
      const key_id = (same & SAME_KEY) !== 0 ? ((a as AuditEvent).key_id as string) : dict<string>();
      const timestamp = (same & SAME_TIME) !== 0 ? (a as AuditEvent).timestamp : f64();
      const model = (same & SAME_MODEL) !== 0 ? ((a as AuditEvent).model as string) : dict<string>();
      const provider = (same & SAME_PROVIDER) !== 0 ? ((a as AuditEvent).provider as string) : dict<string>();
      const latency_ms = (same & SAME_LATENCY) !== 0 ? (a as AuditEvent).latency_ms : num();
      const input = num();
      const output = num();
      const total = num();
      const record: UsageRecord = {
        id,
        request_id,
        project_id,
        key_id,
        timestamp,
        model,
        provider,
        tokens: { input, output, total },
        latency_ms,
        finish_reason: dict(),
        stream: u8() === 1,
      };
      const present = u8();
      if ((present & 1) !== 0) record.tokens.cached = num();
      if ((present & 2) !== 0) record.cost_usd = u8() === 0 ? null : f64();
      if ((present & 4) !== 0) record.provider_finish_reason = dict();
      if ((present & 8) !== 0) record.endpoint = dict();
      if ((present & 16) !== 0) record.tokens.cache_write = num();
      if ((present & 32) !== 0) {
        const has = u8();
        if ((has & 1) !== 0) record.tags = dict();
        if ((has & 2) !== 0) record.end_user = dict();
        if ((has & 4) !== 0) record.cache_hit = true;
        if ((has & 8) !== 0) record.saved_usd = u8() === 0 ? null : f64();
        if ((has & 16) !== 0) record.requested_model = dict();
        if ((has & 32) !== 0) record.batch_id = dict();
      }
      usage.push(record);
    }
  }
}
