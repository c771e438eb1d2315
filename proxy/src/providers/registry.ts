import type { ProviderConfig, ProviderTypeInfo } from '@gateway/shared';
import type { AdapterFactory, ProviderAdapter } from './adapter.js';
import { anthropicFactory } from './anthropic/anthropic-adapter.js';
import { azureFactory } from './azure/azure-adapter.js';
import { geminiFactory } from './gemini/gemini-adapter.js';
import { mockFactory } from './mock/mock-adapter.js';
import { openAiFactory } from './openai/openai-adapter.js';

/** Every wire protocol the proxy speaks. A new provider is a folder and one line here. */
const FACTORIES: readonly AdapterFactory[] = [openAiFactory, anthropicFactory, azureFactory, geminiFactory, mockFactory];

export const PROVIDER_TYPES: readonly ProviderTypeInfo[] = FACTORIES.map(({ type, defaultBaseUrl, usesBaseUrl }) => ({ type, defaultBaseUrl, usesBaseUrl }));

export function createAdapter(config: ProviderConfig): ProviderAdapter {
  const factory = FACTORIES.find((f) => f.type === config.type);
  if (factory === undefined) throw new Error(`no adapter for provider type ${config.type}`);
  return factory.create(config);
}
