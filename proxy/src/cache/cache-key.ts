import { createHash } from 'node:crypto';
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
  return createHash('sha256')
    .update(canonicalize(question) ?? '')
    .digest('base64url');
}
