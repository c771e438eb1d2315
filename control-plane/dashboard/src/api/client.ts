import { apiErrorFrom, ApiError } from './api-error.js';
import { toQueryString, type QueryValues } from '../lib/record-query.js';

/**
 * The dashboard's only way to the server: the public management API on the same origin, with
 * the signed-in token as the bearer. A 401 means the session is over (the token expired or the
 * account is gone), which the session learns through `onUnauthorized`.
 */
export interface ApiClient {
  get<T>(path: string, query?: QueryValues): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
  /** A file the API streams (a batch's JSON lines), whole, with the bearer as every call has it. */
  download(path: string): Promise<Blob>;
}

export interface ClientOptions {
  token: () => string | null;
  onUnauthorized: (err: ApiError) => void;
  fetch?: typeof fetch;
  /**
   * 'same-origin' for the sign-in calls only, which set, send and clear the session cookie; every
   * other call goes without cookies (its bearer is all it needs).
   */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** Sent with every call of this client. */
  headers?: Record<string, string>;
}

export function createApiClient(options: ClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));

  async function send(method: string, path: string, body: unknown, accept: string): Promise<{ res: Response; token: string | null }> {
    const headers: Record<string, string> = { accept, ...options.headers };
    const token = options.token();
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const res = await doFetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: options.credentials ?? 'omit' });
      return { res, token };
    } catch (err) {
      throw new ApiError(0, 'NETWORK', err instanceof Error ? err.message : 'network error');
    }
  }

  async function refusal(res: Response, token: string | null): Promise<ApiError> {
    let parsed: unknown = null;
    try {
      const text = await res.text();
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    const err = apiErrorFrom(res.status, parsed, res.headers.get('retry-after'));
    if (res.status === 401 && token !== null) options.onUnauthorized(err);
    return err;
  }

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { res, token } = await send(method, path, body, 'application/json');
    if (!res.ok) throw await refusal(res, token);
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    return parsed as T;
  }

  async function download(path: string): Promise<Blob> {
    const { res, token } = await send('GET', path, undefined, 'application/jsonl, application/json');
    if (!res.ok) throw await refusal(res, token);
    try {
      return await res.blob();
    } catch (err) {
      // The answer broke off part way (the server or the network went away).
      throw new ApiError(0, 'NETWORK', err instanceof Error ? err.message : 'network error');
    }
  }

  return {
    get: (path, query) => request('GET', path + (query ? toQueryString(query) : '')),
    post: (path, body) => request('POST', path, body),
    patch: (path, body) => request('PATCH', path, body),
    put: (path, body) => request('PUT', path, body),
    delete: (path) => request('DELETE', path),
    download,
  };
}
