/**
 * An error answer of the API, decided on by its stable `code` and status, never by message text.
 * `status` 0 means the control plane could not be reached at all.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | null;
  /** Seconds, from Retry-After. */
  readonly retryAfter: number | null;

  constructor(status: number, code: string, message: string, options: { param?: string | null; retryAfter?: number | null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter ?? null;
  }
}

/** Reads an OpenAI-shaped error body; anything else (a proxy's HTML page) still becomes an ApiError. */
export function apiErrorFrom(status: number, body: unknown, retryAfterHeader: string | null): ApiError {
  const error = typeof body === 'object' && body !== null ? (body as { error?: { message?: unknown; code?: unknown; param?: unknown } }).error : undefined;
  const retryAfter = retryAfterHeader !== null && /^\d+$/.test(retryAfterHeader) ? Number(retryAfterHeader) : null;
  return new ApiError(
    status,
    typeof error?.code === 'string' ? error.code : `HTTP_${status}`,
    typeof error?.message === 'string' ? error.message : `The control plane answered ${status}.`,
    { param: typeof error?.param === 'string' ? error.param : null, retryAfter },
  );
}

/**
 * One line a person can act on. A 403 says plainly that the API refused the action for the
 * signed-in role, because the dashboard shows every action and lets the API decide.
 */
export function describeError(err: unknown, action?: string): string {
  const doing = action ? `${action}: ` : '';
  if (!(err instanceof ApiError)) return `${doing}${err instanceof Error ? err.message : String(err)}`;
  if (err.status === 0) return `${doing}the control plane cannot be reached. Check the connection and retry.`;
  if (err.status === 403) return `${doing}not allowed for your role. ${err.message} (403 ${err.code})`;
  if (err.status === 429 && err.retryAfter !== null) return `${doing}${err.message} Retry in ${formatWait(err.retryAfter)}. (429 ${err.code})`;
  return `${doing}${err.message} (${err.status} ${err.code})`;
}

function formatWait(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  return `${Math.ceil(seconds / 60)} min`;
}
