import { Errors, GatewayError, type ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, EmbeddingsRequest } from '../adapter.js';
import { checkKnownOptions } from '../openai/adapter-options.js';
import { OpenAiCompatibleAdapter, type AnswerHeaders, type ChunkRewrite, type OpenAiOperation } from '../openai/openai-compatible-adapter.js';
import { providerStatusError } from '../upstream-error.js';
import { azureRetryAfter, contentFilterRefusal } from './azure-errors.js';
import { carryPromptFilters } from './prompt-filter-carry.js';
import { OpenAiBatches, type OpenAiBatchPaths } from '../openai/openai-batches.js';
import { batchMode, type ProviderBatches } from '../provider-batches.js';

/** The latest generally available version of Azure OpenAI's dated inference API (docs/providers.md). */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

/** The first API version whose embeddings take `dimensions` (text-embedding-3 models). */
export const AZURE_DIMENSIONS_SINCE = '2024-02-01';

/**
 * Azure OpenAI: OpenAI's Chat Completions wire format at
 * `{base_url}/openai/deployments/{deployment}/chat/completions?api-version={api_version}`, and its
 * embeddings at `…/deployments/{deployment}/embeddings?api-version=…`, where the deployment is the
 * model's upstream name, with the key in the `api-key` header. Azure ignores the body's `model`
 * (the deployment decides); it is sent set to the deployment name, as for OpenAI.
 */
export class AzureAdapter extends OpenAiCompatibleAdapter {
  readonly type = 'azure';
  private readonly deployments: string;
  private readonly query: string;
  /** Whether the API version takes `dimensions` on embeddings (older ones would ignore it). */
  private readonly takesDimensions: boolean;

  /** Azure OpenAI's Batch API, with `batch: native` (a Global Batch or Data Zone Batch deployment). */
  readonly batches?: ProviderBatches;

  constructor(config: ProviderConfig) {
    if (config.base_url === null) throw new Error(`provider ${config.name}: base_url is required (https://<resource>.openai.azure.com)`);
    if (config.api_key === null) throw new Error(`provider ${config.name}: api_key is required (sent as the api-key header)`);
    checkKnownOptions(config.name, config.options, ['api_version', 'max_tokens_field']);
    const version = config.options.api_version ?? DEFAULT_AZURE_API_VERSION;
    if (typeof version !== 'string' || !API_VERSION.test(version)) {
      throw new Error(`provider ${config.name}: options.api_version must be an Azure OpenAI API version such as ${DEFAULT_AZURE_API_VERSION} or 2025-04-01-preview`);
    }
    const url = new URL(config.base_url);
    if (url.search !== '') throw new Error(`provider ${config.name}: base_url must have no query (api-version comes from options.api_version)`);
    super(config, { origin: url.origin, headers: { 'api-key': config.api_key } });
    // Both the resource endpoint and its `/openai` path are accepted as base_url.
    const root = url.pathname.replace(/\/+$/, '').replace(/\/openai$/, '');
    this.deployments = `${root}/openai/deployments/`;
    this.query = `?api-version=${version}`;
    // Dated versions sort as text: 2023-12-01-preview < 2024-02-01 < 2024-02-15-preview.
    this.takesDimensions = version >= AZURE_DIMENSIONS_SINCE;
    if (batchMode(config.name, config.settings?.batch) === 'native') {
      // Azure names operations without /v1 (`/chat/completions`); the line's model is the batch deployment.
      const paths: OpenAiBatchPaths = { files: `${root}/openai/files`, batches: `${root}/openai/batches`, query: this.query, operation: (operation) => operation.replace(/^\/v1/, '') };
      this.batches = new OpenAiBatches(config.name, config.base_url, { 'api-key': config.api_key }, this, paths);
    }
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.batches?.close()]);
  }

  protected path(upstreamModel: string, operation: OpenAiOperation): string {
    return `${this.deployments}${encodeURIComponent(upstreamModel)}/${operation}${this.query}`;
  }

  protected override embeddingsRefusal(request: EmbeddingsRequest): GatewayError | null {
    const dimensions = request.body.dimensions;
    if (this.takesDimensions || dimensions === undefined || dimensions === null) return null;
    return Errors.invalidField('dimensions', `Provider ${this.name} uses an Azure OpenAI API version without \`dimensions\` (it came with ${AZURE_DIMENSIONS_SINCE}).`);
  }

  protected override statusError(status: number, bodyText: string, res: AnswerHeaders): GatewayError {
    return (status === 400 ? contentFilterRefusal(this.name, bodyText) : null) ?? providerStatusError(this.name, status, bodyText, azureRetryAfter((name) => res.header(name)));
  }

  protected override chunkRewrite(): ChunkRewrite {
    return carryPromptFilters();
  }
}

export const azureFactory: AdapterFactory = {
  type: 'azure',
  // `batch: native` runs batches sent to its deployments at Azure OpenAI's Batch API.
  fields: { batch: 'optional' },
  defaultBaseUrl: null,
  usesBaseUrl: true,
  create: (config) => new AzureAdapter(config),
};
