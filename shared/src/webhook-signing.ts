import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` + base64 of
 * 24 to 64 random bytes, and a signature is `v1,` + base64 of HMAC-SHA256, keyed with the decoded
 * bytes, of `{webhook-id}.{webhook-timestamp}.{body}`.
 */
export const SECRET_PREFIX = 'whsec_';
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;
const GENERATED_SECRET_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(GENERATED_SECRET_BYTES).toString('base64');
}

/** Why a caller's secret is refused ("must …"), or null when it is well-formed. */
export function secretProblem(secret: string): string | null {
  const form = `must be "${SECRET_PREFIX}" followed by the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`;
  if (!secret.startsWith(SECRET_PREFIX)) return form;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 === 1) return form;
  const bytes = Buffer.from(encoded, 'base64');
  // Node decodes leniently; only a canonical encoding is taken, so the secret means one thing.
  if (bytes.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return form;
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) return form;
  return null;
}

export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** The `webhook-signature` header value for one attempt. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** An event id: `msg_` and 128 random bits, with none of the `.` the signed content is split on. */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}
