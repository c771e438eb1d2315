import { ApiError, AuthError, UnreachableError, type CliError } from './cli-errors.js';
import { sanitize } from './table.js';

/**
 * One HTTP exchange with a gatewayctl target (control plane, proxy, writer), nothing more: it
 * turns a server that cannot be reached into exit 4 and leaves the status to the caller.
 * --verbose prints each request and answer, never the Authorization header nor a password or
 * token of a body.
 */
/** A list is sent as the parameter repeated (`tag=a=1&tag=b=2`). */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export interface HttpRequest {
  method: string;
  path: string;
  query?: Query;
  body?: unknown;
  bearer?: string;
}

export interface HttpAnswer {
  status: number;
  /** The parsed JSON body, the text when it is not JSON, null when empty. */
  body: unknown;
}

export type VerboseLog = ((line: string) => void) | null;

const TIMEOUT_MS = 30_000;
const USER_AGENT = 'gatewayctl';
const SECRET_FIELDS = new Set(['password', 'new_password', 'current_password', 'access_token', 'key']);

export class Http {
  constructor(
    readonly base: string,
    private readonly log: VerboseLog = null,
  ) {}

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value as readonly string[]) params.append(name, item);
      else params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.base}${path}${search === '' ? '' : `?${search}`}`;
  }

  async send(req: HttpRequest, signal?: AbortSignal): Promise<HttpAnswer> {
    const url = this.url(req.path, req.query);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    this.log?.(`> ${req.method} ${url}`);
    for (const [name, value] of Object.entries(headers)) this.log?.(`> ${name}: ${value}`);
    if (req.bearer !== undefined) this.log?.('> authorization: (not shown)');
    if (req.body !== undefined) this.log?.(`> ${JSON.stringify(redact(req.body))}`);
    if (req.bearer !== undefined) headers.authorization = `Bearer ${req.bearer}`;

    const started = performance.now();
    let res: Response;
    let text: string;
    try {
      const timeout = AbortSignal.timeout(TIMEOUT_MS);
      res = await fetch(url, {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new UnreachableError(`cannot reach ${this.base}: ${reason(err)}`);
    }
    this.log?.(`< ${res.status} ${res.statusText} (${Math.round(performance.now() - started)} ms)`);
    return { status: res.status, body: parseBody(text) };
  }

  /**
   * A GET whose 2xx answer is handed over as it arrives (a batch's output: any size), so only the
   * wait for the answer to start is timed, not the download. Any other answer is read whole, as
   * `send` reads it, for its error.
   */
  async download(req: Omit<HttpRequest, 'method' | 'body'>): Promise<HttpAnswer & { chunks: AsyncIterable<Uint8Array> | null }> {
    const url = this.url(req.path, req.query);
    const headers: Record<string, string> = { accept: 'application/jsonl, application/json', 'user-agent': USER_AGENT };
    this.log?.(`> GET ${url}`);
    for (const [name, value] of Object.entries(headers)) this.log?.(`> ${name}: ${value}`);
    if (req.bearer !== undefined) this.log?.('> authorization: (not shown)');
    if (req.bearer !== undefined) headers.authorization = `Bearer ${req.bearer}`;

    const started = performance.now();
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('timed out', 'TimeoutError')), TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(url, { method: 'GET', headers, signal: timeout.signal });
    } catch (err) {
      throw new UnreachableError(`cannot reach ${this.base}: ${reason(timeout.signal.aborted ? timeout.signal.reason : err)}`);
    } finally {
      clearTimeout(timer);
    }
    this.log?.(`< ${res.status} ${res.statusText} (${Math.round(performance.now() - started)} ms)`);
    if (res.ok && res.body !== null) return { status: res.status, body: null, chunks: res.body };
    return { status: res.status, body: parseBody(await res.text()), chunks: null };
  }
}

/** The error an answer outside 2xx stands for: 401 means the sign-in is over (exit 3), anything else exit 1. */
export function failure(answer: HttpAnswer, base: string): CliError {
  const error = (answer.body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  if (typeof error?.message === 'string' && typeof error.code === 'string') {
    const message = sanitize(error.message);
    if (answer.status === 401) return new AuthError(`${message} (${error.code}); sign in with: gatewayctl login`);
    return new ApiError(`${message} (${error.code}, HTTP ${answer.status})`, error.code, answer.status);
  }
  if (answer.status === 401) return new AuthError(`${base} refused the token (HTTP 401); sign in with: gatewayctl login`);
  return new ApiError(`${base} answered HTTP ${answer.status} without an API error; is this the control plane's URL?`, `HTTP_${answer.status}`, answer.status);
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function reason(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([name, v]) => [name, SECRET_FIELDS.has(name) ? '(not shown)' : redact(v)]));
}
