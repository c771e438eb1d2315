import type { GatewayError } from '@gateway/shared';
import type { ChatRequest, CompletionResult } from '../request/internal-request.js';
import { BatchApiClient, type Authorize } from './batch-api-client.js';

/**
 * A provider's own batch API, for entries with `batch: native` (docs/batches.md "Provider-run
 * batches"): the lines the gateway admitted go to the provider as one batch at its batch price,
 * are polled off the request path, and each result is read back as the provider's answer to that
 * line. Everything provider-specific (files, paths, result shapes) lives in the provider's folder
 * behind this interface; the runner (batches/native-batches.ts) knows none of it.
 */
export interface BatchLine {
  /** The gateway's id of the line at the provider (`l<line number>`). */
  customId: string;
  /** The request the adapter would have sent for the line, as the provider's batch API takes it. */
  body: Buffer;
}

/** One line of a provider batch's results. */
export type ProviderBatchResult =
  | { customId: string; outcome: 'answered'; status: number; body: Buffer }
  /**
   * The provider never ran it: its batch was cancelled first, or its window passed. A provider
   * that does not list the lines it never ran (Bedrock, Vertex AI) says this once for its whole
   * batch, with the custom id `*`.
   */
  | { customId: string; outcome: 'canceled' | 'expired' };

export interface ProviderBatches {
  /**
   * The fewest lines the provider takes in one batch (Bedrock's quota: 100); a batch with fewer
   * lines for it is run by the gateway, at the model's normal price.
   */
  readonly minLines: number;
  /**
   * The provider's batch operation a request goes to (one provider batch holds lines of one
   * operation) and the request's body in it: what `complete` would have sent.
   */
  line(request: ChatRequest): { operation: string; body: Buffer };
  /** Makes one provider batch of the lines (all of `operation`); resolves with the provider's id for it. */
  submit(operation: string, lines: readonly BatchLine[], tag: string): Promise<string>;
  /** Whether the provider's batch has ended (its results are then final). */
  ended(id: string): Promise<boolean>;
  /** The results of an ended batch, one at a time as they are read from the provider. */
  results(id: string): AsyncIterable<ProviderBatchResult>;
  /** Asks the provider to cancel its batch (one that has ended already is left as it is). */
  cancel(id: string): Promise<void>;
  /** A 2xx result read as `complete` reads the provider's answer. */
  answer(request: ChatRequest, body: Buffer): CompletionResult;
  /** A result of another status, as the gateway error `complete` would have thrown. */
  refusal(status: number, body: Buffer): GatewayError;
  close(): Promise<void>;
}

/** What an adapter lends its batch API: a result read as `complete` reads an answer, and a refusal as it would throw it. */
export interface BatchAnswers {
  batchAnswer(request: ChatRequest, body: Buffer): CompletionResult;
  batchRefusal(status: number, body: Buffer): GatewayError;
}

/** The common part of the batch APIs: their HTTP client, the adapter's reading of answers, cancelling only what runs. */
export abstract class BatchApi implements ProviderBatches {
  protected readonly client: BatchApiClient;
  readonly minLines: number = 1;

  protected constructor(
    provider: string,
    origin: string,
    headers: Record<string, string>,
    private readonly answers: BatchAnswers,
    authorize: Authorize | null = null,
  ) {
    this.client = new BatchApiClient(provider, origin, headers, authorize);
  }

  abstract line(request: ChatRequest): { operation: string; body: Buffer };
  abstract submit(operation: string, lines: readonly BatchLine[], tag: string): Promise<string>;
  abstract ended(id: string): Promise<boolean>;
  abstract results(id: string): AsyncIterable<ProviderBatchResult>;
  /** Asks the provider to cancel a batch that has not ended. */
  protected abstract cancelRunning(id: string): Promise<void>;

  async cancel(id: string): Promise<void> {
    if (await this.ended(id)) return;
    await this.cancelRunning(id);
  }

  answer(request: ChatRequest, body: Buffer): CompletionResult {
    return this.answers.batchAnswer(request, body);
  }

  refusal(status: number, body: Buffer): GatewayError {
    return this.answers.batchRefusal(status, body);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A provider entry's `batch` field: who runs the lines of batches sent to its models. */
export function batchMode(provider: string, value: string | undefined, fallback: 'native' | 'gateway' = 'gateway'): 'native' | 'gateway' {
  const mode = value ?? fallback;
  if (mode !== 'native' && mode !== 'gateway') throw new Error(`provider ${provider}: "batch" must be native or gateway`);
  return mode;
}
