import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { logRedaction } from '@gateway/shared';

/** Log options for the control plane and writer; the redaction list is shared with the proxy. */
export function loggerOptions(level: string, name: string): LoggerOptions {
  return { level, name, redact: logRedaction() };
}

/** `destination` defaults to stdout; tests pass their own to read what was logged. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level, name)) : pino(loggerOptions(level, name), destination);
}
