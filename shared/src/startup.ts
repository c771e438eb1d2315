import { redactUrl } from './config/env.js';

/**
 * Start-up failures an operator can act on: which dependency, at which address (password
 * redacted), and how to start it on a Debian-like machine.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

const HOW_TO_START: Record<'redis' | 'postgres', string> = {
  redis: 'Start Redis (for example: redis-server --daemonize yes --port 6379) or set REDIS_URL.',
  postgres: 'Start PostgreSQL (for example: pg_ctlcluster 15 main start) or set DATABASE_URL.',
};

export function unreachableMessage(service: 'redis' | 'postgres', url: string, reason: string): string {
  const label = service === 'redis' ? 'Redis' : 'PostgreSQL';
  // A cluster or sentinel description ("cluster host:port,…") is no URL and holds no credential.
  const where = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? redactUrl(url) : url;
  return `${label} is unreachable at ${where} (${reason}). ${HOW_TO_START[service]}`;
}

/** The dependency answered but refused who we are: waiting or starting it would not help. */
export function refusedMessage(service: 'redis' | 'postgres', url: string, reason: string): string {
  const label = service === 'redis' ? 'Redis' : 'PostgreSQL';
  const where = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? redactUrl(url) : url;
  const setting = service === 'redis' ? 'REDIS_URL' : 'DATABASE_URL';
  return `${label} at ${where} refused the connection's credentials (${reason}). Check the user and password in ${setting}.`;
}
