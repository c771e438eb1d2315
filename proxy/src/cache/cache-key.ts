import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { RecalledParse } from '../pipeline/context.js';

// canonicalize 2.x is CommonJS whose typings declare an ES default export; required directly.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (input: unknown) => string | undefined;

/**
 * What makes two requests the same question (DESIGN §7 "Response cache"): the body without the
 * fields that change how the answer is delivered or who asked — `stream`, `stream_options`, `user`,
 * `metadata` — written as RFC 8785 canonical JSON (key order, whitespace and number spelling do
 * not matter), hashed with SHA-256. The project and the endpoint are in the key name beside it.
 */
const DELIVERY_FIELDS = new Set(['stream', 'stream_options', 'user', 'metadata']);

export function requestHash(body: unknown): string {
  const question: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body as Record<string, unknown>)) if (!DELIVERY_FIELDS.has(field)) question[field] = value;
  return hash('sha256', canonicalize(question) ?? '', 'base64url');
}

/** Bodies longer than this are hashed every time (a memo of them would hold much for little). */
const MEMO_BODY_BYTES = 16 * 1024;
/** Bytes of bodies the memo holds before it starts again. */
const MEMO_BYTES = 4 * 1024 * 1024;

/** What the memo keeps per body: its hash, the entry name last made of it, and a parse to give again. */
interface Remembered {
  hash: string;
  projectId: string;
  endpoint: string;
  name: string;
  /** The parse of a request with these bytes that was answered from the cache (`keep`); null until one was. */
  parse: RecalledParse | null;
}

/** Memory the kept parses may hold (their own bound: they never push names out). */
const KEPT_PARSE_BYTES = 4 * 1024 * 1024;
/** A kept parse is counted at this many bytes per byte of its body (objects are larger than text). */
const PARSE_WEIGHT = 4;

/**
 * What keeping a parse holds in memory: its objects, and the memory of its body's bytes, which a
 * parse refers to (to forward them as they came). A small body is a slice of Buffer's shared 8 KiB
 * pool, and keeping it keeps the whole slab, so the slab is what is counted.
 */
function parseWeight(raw: Buffer): number {
  return raw.length * PARSE_WEIGHT + raw.buffer.byteLength;
}

/**
 * Entry names of bodies seen recently, by their exact bytes: a question asked again (an
 * evaluation run, a retry, an agent re-asking) is usually sent byte for byte as before, and then
 * its name is a Map lookup instead of a canonical serialisation, a SHA-256 and a new key string
 * (about a sixth of a cache hit's CPU; the same string each time is also cheaper to look up). The
 * hash is a function of the bytes alone — nothing before the cache lookup changes the parsed body —
 * so a remembered one is never stale.
 *
 * A body answered from the cache also keeps its parse (`keep`), which `recall` gives to the next
 * request with the same bytes to the same project and endpoint: that request skips JSON.parse and
 * the protocol's validation (with their garbage, about a sixth of a hit's CPU).
 */
export class EntryNames {
  private readonly memo = new Map<string, Remembered>();
  private bytes = 0;
  private parseBytes = 0;

  constructor(private readonly nameOf: (projectId: string, endpoint: string, hash: string) => string) {}

  of(projectId: string, endpoint: string, body: unknown, raw: Buffer | null): string {
    if (raw === null || raw.length > MEMO_BODY_BYTES) return this.nameOf(projectId, endpoint, requestHash(body));
    // latin1: a byte-for-byte copy into a one-byte string, the cheapest exact Map key for bytes.
    const text = raw.toString('latin1');
    const known = this.memo.get(text);
    if (known !== undefined) {
      if (known.projectId !== projectId || known.endpoint !== endpoint) {
        // Another endpoint parses the same bytes its own way.
        if (known.endpoint !== endpoint) known.parse = null;
        known.projectId = projectId;
        known.endpoint = endpoint;
        known.name = this.nameOf(projectId, endpoint, known.hash);
      }
      return known.name;
    }
    const hash = requestHash(body);
    const name = this.nameOf(projectId, endpoint, hash);
    if (this.bytes + text.length > MEMO_BYTES) {
      this.memo.clear();
      this.bytes = 0;
      this.parseBytes = 0;
    }
    this.memo.set(text, { hash, projectId, endpoint, name, parse: null });
    this.bytes += text.length;
    return name;
  }

  /** The entry name and kept parse of exactly these bytes sent to this project and endpoint; null when there is none. */
  recall(projectId: string, endpoint: string, raw: Buffer): { name: string; parse: RecalledParse } | null {
    if (raw.length > MEMO_BODY_BYTES) return null;
    const known = this.memo.get(raw.toString('latin1'));
    if (known === undefined || known.parse === null || known.projectId !== projectId || known.endpoint !== endpoint) return null;
    // Its parse is not null: checked just above.
    return known as { name: string; parse: RecalledParse };
  }

  /** Keeps the parse of a request answered from the cache, for `recall`; its body was named by `of` just before. */
  keep(projectId: string, endpoint: string, raw: Buffer, parse: RecalledParse): void {
    if (raw.length > MEMO_BODY_BYTES) return;
    const text = raw.toString('latin1');
    const known = this.memo.get(text);
    if (known === undefined || known.parse !== null || known.projectId !== projectId || known.endpoint !== endpoint) return;
    const weight = parseWeight(raw);
    if (this.parseBytes + weight > KEPT_PARSE_BYTES) return;
    known.parse = parse;
    this.parseBytes += weight;
  }
}
