import { Errors } from '@gateway/shared';
import { Pool, type Dispatcher, type FormData } from 'undici';
import { JsonlSplitter } from '../batches/jsonl-splitter.js';

/**
 * The HTTP side of a provider's batch API (provider-batches.ts), off the request path: JSON calls
 * and JSON-lines downloads over one small keep-alive pool with the provider's own headers. A call
 * the provider refuses is an UPSTREAM_ERROR naming the call and the status, never the provider's
 * body (it may quote the request); the runner tries again at its next poll.
 */
const TIMEOUT_MS = 120_000;

type Method = 'GET' | 'POST' | 'PUT';

/**
 * The headers a request carries besides the fixed ones, made for that request (an AWS signature
 * covers its method, path, body and headers); none when the provider's credential is a fixed header.
 */
export type Authorize = (method: Method, path: string, body: Buffer | undefined, headers: Record<string, string>) => Record<string, string> | Promise<Record<string, string>>;

export class BatchApiClient {
  private readonly pool: Pool;

  constructor(
    private readonly provider: string,
    origin: string,
    private readonly headers: Record<string, string>,
    private readonly authorize: Authorize | null = null,
  ) {
    this.pool = new Pool(origin, { connections: 4, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, connectTimeout: 10_000 });
  }

  /** `body`: a value to send as JSON, or JSON already made (a Buffer, sent as its bytes). */
  async json<T>(what: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const answer = await this.send(what, method, path, payload, body === undefined ? {} : { 'content-type': 'application/json' });
    return (await answer.body.json()) as T;
  }

  /** Stores `body` as it is (an object in a bucket): `PUT` at its path (S3), or `POST` to an upload path (Cloud Storage). */
  async upload(what: string, method: 'PUT' | 'POST', path: string, body: Buffer, contentType: string): Promise<void> {
    const answer = await this.send(what, method, path, body, { 'content-type': contentType });
    await answer.body.dump();
  }

  /** A multipart upload (undici sets the boundary). */
  async form<T>(what: string, path: string, form: FormData): Promise<T> {
    const answer = await this.send(what, 'POST', path, form, {});
    return (await answer.body.json()) as T;
  }

  /**
   * The JSON lines of a download, one at a time (blank lines skipped), never the whole body at
   * once. `missing`: what a 404 means — nothing to read (an object a provider did not write), or a refusal.
   */
  async *lines(what: string, path: string, missing: 'none' | 'refused' = 'refused'): AsyncGenerator<string> {
    const answer = await this.send(what, 'GET', path, undefined, { accept: 'application/x-ndjson, application/jsonl, application/json' }, missing === 'none');
    if (answer === null) return;
    const ready: string[] = [];
    const splitter = new JsonlSplitter((text) => {
      if (text.trim() !== '') ready.push(text);
    });
    for await (const chunk of answer.body) {
      splitter.push(chunk as Buffer);
      while (ready.length > 0) yield ready.shift()!;
    }
    splitter.end();
    while (ready.length > 0) yield ready.shift()!;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private send(what: string, method: Method, path: string, body: Buffer | FormData | undefined, extra: Record<string, string>): Promise<Dispatcher.ResponseData>;
  private send(what: string, method: Method, path: string, body: Buffer | FormData | undefined, extra: Record<string, string>, notFoundIsNull: boolean): Promise<Dispatcher.ResponseData | null>;
  private async send(what: string, method: Method, path: string, body: Buffer | FormData | undefined, extra: Record<string, string>, notFoundIsNull = false): Promise<Dispatcher.ResponseData | null> {
    let headers = { ...this.headers, ...extra };
    let answer;
    try {
      if (this.authorize !== null) headers = { ...headers, ...(await this.authorize(method, path, Buffer.isBuffer(body) ? body : undefined, headers)) };
      answer = await this.pool.request({ method, path, headers, ...(body === undefined ? {} : { body }) });
    } catch (err) {
      throw Errors.providerFailed(this.provider, err);
    }
    if (notFoundIsNull && answer.statusCode === 404) {
      await answer.body.dump().catch(() => {});
      return null;
    }
    if (answer.statusCode < 200 || answer.statusCode > 299) {
      await answer.body.dump().catch(() => {});
      throw Errors.providerBatchRefused(this.provider, what, answer.statusCode);
    }
    return answer;
  }
}
