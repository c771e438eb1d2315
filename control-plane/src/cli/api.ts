import { failure, type Http, type Query } from './http.js';
import type { Session } from './session.js';

/** The management API as the signed-in account: every call carries the (refreshed) token; an error answer throws. */
export class Api {
  constructor(
    readonly http: Http,
    private readonly session: Session,
  ) {}

  async get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return (await this.send<T>('GET', path, undefined, query, signal)).body;
  }

  async post<T>(path: string, body?: unknown): Promise<T> {
    return (await this.send<T>('POST', path, body)).body;
  }

  async patch<T>(path: string, body: unknown): Promise<T> {
    return (await this.send<T>('PATCH', path, body)).body;
  }

  async delete(path: string): Promise<void> {
    await this.send('DELETE', path);
  }

  /** A download's bytes as they arrive; an error answer throws before any is handed over. */
  async download(path: string, query?: Query): Promise<AsyncIterable<Uint8Array>> {
    const bearer = await this.session.bearer();
    const answer = await this.http.download({ path, query, bearer });
    if (answer.status < 200 || answer.status >= 300 || answer.chunks === null) throw failure(answer, this.http.base);
    return answer.chunks;
  }

  /** For the callers that care whether it was a 200 or a 201. */
  async send<T>(method: string, path: string, body?: unknown, query?: Query, signal?: AbortSignal): Promise<{ status: number; body: T }> {
    const bearer = await this.session.bearer();
    const answer = await this.http.send({ method, path, query, body, bearer }, signal);
    if (answer.status < 200 || answer.status >= 300) throw failure(answer, this.http.base);
    return { status: answer.status, body: answer.body as T };
  }
}
