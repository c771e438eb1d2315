import type { ProviderConfig } from '@gateway/shared';
import type { AdapterFactory } from '../adapter.js';
import { checkKnownOptions } from './adapter-options.js';
import { OpenAiCompatibleAdapter, type OpenAiOperation } from './openai-compatible-adapter.js';
import { OPENAI_PRESETS } from './openai-presets.js';
import { OpenAiBatches } from './openai-batches.js';
import { batchMode, type ProviderBatches } from '../provider-batches.js';

/**
 * Any server speaking OpenAI's Chat Completions protocol (OpenAI itself, vLLM, llama.cpp,
 * LiteLLM…) at `{base_url}/chat/completions`, and its embeddings at `{base_url}/embeddings`, with
 * the key as a Bearer token; with `responses: native`, also OpenAI's Responses API at
 * `{base_url}/responses`, to which /v1/responses requests go as they came.
 */
export class OpenAiAdapter extends OpenAiCompatibleAdapter {
  readonly type = 'openai';
  private readonly chatPath: string;
  private readonly embeddingsPath: string;
  private readonly nativeResponsesPath: string | null;
  /** OpenAI's own Batch API, with `batch: native`. */
  readonly batches?: ProviderBatches;

  constructor(config: ProviderConfig) {
    if (config.base_url === null) throw new Error(`provider ${config.name}: base_url is required`);
    const responses = config.settings?.responses ?? 'translate';
    if (responses !== 'native' && responses !== 'translate') throw new Error(`provider ${config.name}: "responses" must be native or translate`);
    checkKnownOptions(config.name, config.options, ['max_tokens_field']);
    const url = new URL(`${config.base_url}/chat/completions`);
    super(config, { origin: url.origin, headers: config.api_key === null ? {} : { authorization: `Bearer ${config.api_key}` } });
    this.chatPath = url.pathname + url.search;
    const embeddings = new URL(`${config.base_url}/embeddings`);
    this.embeddingsPath = embeddings.pathname + embeddings.search;
    const native = new URL(`${config.base_url}/responses`);
    this.nativeResponsesPath = responses === 'native' ? native.pathname + native.search : null;
    if (batchMode(config.name, config.settings?.batch) === 'native') {
      this.batches = new OpenAiBatches(config.name, config.base_url, config.api_key === null ? {} : { authorization: `Bearer ${config.api_key}` }, this);
    }
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.batches?.close()]);
  }

  protected override responsesPath(): string | null {
    return this.nativeResponsesPath;
  }

  protected path(_upstreamModel: string, operation: OpenAiOperation): string {
    return operation === 'embeddings' ? this.embeddingsPath : this.chatPath;
  }
}

export const openAiFactory: AdapterFactory = {
  type: 'openai',
  // `responses: native` sends /v1/responses to the provider's own Responses API as it came.
  // `batch: native` runs batches sent to its models at OpenAI's own Batch API.
  fields: { responses: 'optional', batch: 'optional' },
  defaultBaseUrl: 'https://api.openai.com/v1',
  usesBaseUrl: true,
  presets: OPENAI_PRESETS,
  create: (config) => new OpenAiAdapter(config),
};
