import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Log options for the control plane and writer. Redaction is the backstop; the first rule is
 * that no code path puts a secret in a log call.
 */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.password',
  '*.access_token',
  '*.api_key',
  '*.key',
  '*.secret',
];

export function loggerOptions(level: string, name: string): LoggerOptions {
  return { level, name, redact: { paths: LOG_REDACT_PATHS, censor: '[REDACTED]' } };
}

export function createLogger(level: string, name: string): Logger {
  return pino(loggerOptions(level, name));
}
