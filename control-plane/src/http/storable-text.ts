import type { FastifyRequest } from 'fastify';
import { Errors } from '@gateway/shared';

/**
 * PostgreSQL text cannot hold U+0000: a query carrying it fails as a server error. No field of the
 * management API has a use for it, so any string holding it, in the body, the query string or the
 * path, is refused with a 400 naming the field before a handler can send it to the database.
 * (Names have stricter rules of their own, see names.ts.)
 */
export async function refuseUnstorableText(req: FastifyRequest): Promise<void> {
  for (const [where, value] of [['path', req.params], ['query', req.query], ['body', req.body]] as const) {
    const field = fieldWithNul(value, '');
    if (field !== null) {
      throw Errors.invalidInput(where, field, 'must not contain U+0000');
    }
  }
}

/** The dotted path of the first string (or property name) holding U+0000, or null. */
function fieldWithNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, inner] of Object.entries(value)) {
    const innerPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return innerPath;
    const found = fieldWithNul(inner, innerPath);
    if (found !== null) return found;
  }
  return null;
}
