import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

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

/** `destination` defaults to stdout; tests pass their own to read what was logged. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level, name)) : pino(loggerOptions(level, name), destination);
}
