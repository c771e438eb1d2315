/**
 * Log redaction for every service, in pino's path syntax. Redaction is the backstop: the first rule
 * is that no code path puts a secret in a log call. `*.x` covers a field one level down in any
 * logged object (`{ headers: { authorization } }`); the `req.headers.*` paths cover the request
 * objects Fastify logs, two levels down.
 */
export const LOG_REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.authorization',
  '*["x-api-key"]',
  '*.cookie',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.access_token',
  '*.token',
  '*.api_key',
  '*.apiKey',
  '*.key',
  '*.secret',
  '*.aws_secret_access_key',
  '*.aws_session_token',
  '*.private_key',
];

export const LOG_REDACT_CENSOR = '[REDACTED]';

/** pino's `redact` option. */
export function logRedaction(): { paths: string[]; censor: string } {
  return { paths: [...LOG_REDACT_PATHS], censor: LOG_REDACT_CENSOR };
}
