import { hash } from 'node:crypto';
import { createRequire } from 'node:module';

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

/** What the memo keeps per body: its hash, and the entry name last made of it. */
interface Remembered {
  hash: string;
  projectId: string;
  endpoint: string;
  name: string;
}

/**
 * Entry names of bodies seen recently, by their exact bytes: a question asked again (an
 * evaluation run, a retry, an agent re-asking) is usually sent byte for byte as before, and then
 * its name is a Map lookup instead of a canonical serialisation, a SHA-256 and a new key string
 * (about a sixth of a cache hit's CPU; the same string each time is also cheaper to look up). The
 * hash is a function of the bytes alone — nothing before the cache lookup changes the parsed body —
 * so a remembered one is never stale.
 */
export class EntryNames {
  private readonly memo = new Map<string, Remembered>();
  private bytes = 0;

  constructor(private readonly nameOf: (projectId: string, endpoint: string, hash: string) => string) {}

  of(projectId: string, endpoint: string, body: unknown, raw: Buffer | null): string {
    if (raw === null || raw.length > MEMO_BODY_BYTES) return this.nameOf(projectId, endpoint, requestHash(body));
    // latin1: a byte-for-byte copy into a one-byte string, the cheapest exact Map key for bytes.
    const text = raw.toString('latin1');
    const known = this.memo.get(text);
    if (known !== undefined) {
      if (known.projectId !== projectId || known.endpoint !== endpoint) {
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
    }
    this.memo.set(text, { hash, projectId, endpoint, name });
    this.bytes += text.length;
    return name;
  }
}
