/**
 * How the writer tells a PostgreSQL failure's kind from its code (postgres.js puts the SQLSTATE,
 * or its own connection error name, in `code`).
 */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const CONNECTION_LOST = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // The writer's own: a batch write that never settled, or whose pool was replaced under it.
  'WRITE_TIMEOUT',
  'POOL_REPLACED',
  // admin_shutdown, crash_shutdown, cannot_connect_now: the server closes the connection after these.
  '57P01',
  '57P02',
  '57P03',
]);

/** The connection the statement ran on is gone (or cannot be trusted any more). */
export function isConnectionLost(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && (CONNECTION_LOST.has(code) || code.startsWith('08'));
}

/**
 * Postgres cannot take writes right now, whatever the batch holds: the connection is lost, the
 * server is full, or a standby (read-only) answers where the primary used to be.
 */
export function isUnavailable(err: unknown): boolean {
  const code = codeOf(err);
  return isConnectionLost(err) || code === '53300' || code === '25006';
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity): the data is at fault, not Postgres. */
export function isDataError(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && /^2[23][0-9A-Z]{3}$/.test(code);
}
