import type { ChatRequest } from '../adapter.js';
import { BatchApi, type BatchAnswers, type BatchLine, type ProviderBatchResult } from '../provider-batches.js';

/**
 * Anthropic's Message Batches (`batch: native` on an anthropic entry): the lines go as the
 * `requests` of one `POST /v1/messages/batches` (each `params` the Messages body the adapter
 * would have sent), the batch is polled (`GET /v1/messages/batches/{id}`) until its
 * `processing_status` is `ended`, and its results are read line by line from its `results_url`.
 */
export interface AnthropicBatchLines extends BatchAnswers {
  batchBody(request: ChatRequest): Buffer;
}

interface MessageBatchObject {
  id: string;
  processing_status: string;
  results_url?: string | null;
}

interface ResultLine {
  custom_id?: unknown;
  result?: { type?: unknown; message?: unknown; error?: { error?: { type?: unknown } } | null } | null;
}

/** Anthropic's error types as the HTTP statuses its API answers them with. */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export class AnthropicBatches extends BatchApi {
  private readonly basePath: string;
  private readonly origin: string;

  constructor(
    provider: string,
    baseUrl: string,
    headers: Record<string, string>,
    private readonly adapter: AnthropicBatchLines,
  ) {
    const url = new URL(baseUrl);
    super(provider, url.origin, headers, adapter);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
  }

  line(request: ChatRequest): { operation: string; body: Buffer } {
    return { operation: '/v1/messages', body: this.adapter.batchBody(request) };
  }

  async submit(_operation: string, lines: readonly BatchLine[]): Promise<string> {
    const parts: Buffer[] = [Buffer.from('{"requests":[')];
    lines.forEach((line, i) => parts.push(Buffer.from(`${i === 0 ? '' : ','}{"custom_id":${JSON.stringify(line.customId)},"params":`), line.body, Buffer.from('}')));
    parts.push(Buffer.from(']}'));
    const batch = await this.client.json<MessageBatchObject>('make the message batch', 'POST', `${this.basePath}/v1/messages/batches`, Buffer.concat(parts));
    return batch.id;
  }

  async ended(id: string): Promise<boolean> {
    return (await this.get(id)).processing_status === 'ended';
  }

  async *results(id: string): AsyncIterable<ProviderBatchResult> {
    const batch = await this.get(id);
    const path = this.pathOf(batch.results_url) ?? `${this.basePath}/v1/messages/batches/${encodeURIComponent(id)}/results`;
    for await (const text of this.client.lines('send the batch results', path)) {
      const result = readResult(text);
      if (result !== null) yield result;
    }
  }

  protected async cancelRunning(id: string): Promise<void> {
    await this.client.json('cancel the message batch', 'POST', `${this.basePath}/v1/messages/batches/${encodeURIComponent(id)}/cancel`);
  }

  private get(id: string): Promise<MessageBatchObject> {
    return this.client.json<MessageBatchObject>('say how the message batch goes', 'GET', `${this.basePath}/v1/messages/batches/${encodeURIComponent(id)}`);
  }

  /** The results URL's path when it is on the provider's own origin (the credential goes nowhere else). */
  private pathOf(url: string | null | undefined): string | null {
    if (typeof url !== 'string') return null;
    try {
      const parsed = new URL(url, this.origin);
      return parsed.origin === this.origin ? parsed.pathname + parsed.search : null;
    } catch {
      return null;
    }
  }
}

function readResult(text: string): ProviderBatchResult | null {
  let line: ResultLine;
  try {
    line = JSON.parse(text) as ResultLine;
  } catch {
    return null;
  }
  const customId = line.custom_id;
  const result = line.result;
  if (typeof customId !== 'string' || result === null || result === undefined) return null;
  switch (result.type) {
    case 'succeeded':
      return { customId, outcome: 'answered', status: 200, body: Buffer.from(JSON.stringify(result.message ?? null)) };
    case 'errored': {
      const type = result.error?.error?.type;
      const status = (typeof type === 'string' ? ERROR_STATUS[type] : undefined) ?? 500;
      return { customId, outcome: 'answered', status, body: Buffer.from(JSON.stringify(result.error ?? null)) };
    }
    case 'canceled':
      return { customId, outcome: 'canceled' };
    case 'expired':
      return { customId, outcome: 'expired' };
    default:
      return null;
  }
}
