import type { ProviderConfig, ProviderTypeInfo } from '@gateway/shared';
import type { AdapterFactory, ProviderAdapter } from './adapter.js';
import { anthropicFactory } from './anthropic/anthropic-adapter.js';
import { azureFactory } from './azure/azure-adapter.js';
import { bedrockFactory } from './bedrock/bedrock-adapter.js';
import { geminiFactory } from './gemini/gemini-adapter.js';
import { mockFactory } from './mock/mock-adapter.js';
import { openAiFactory } from './openai/openai-adapter.js';
import { vertexFactory } from './vertex/vertex-adapter.js';

/** What drives an adapter from outside the proxy too (`@gateway/proxy/providers`: the bench's adapters-alone figure). */
export { Cancel } from './cancel.js';

/** Every wire protocol the proxy speaks. A new provider is a folder and one line here. */
const FACTORIES: readonly AdapterFactory[] = [openAiFactory, anthropicFactory, azureFactory, geminiFactory, bedrockFactory, vertexFactory, mockFactory];

/** What the providers file needs of each type; the optional parts only where a type has them. */
export const PROVIDER_TYPES: readonly ProviderTypeInfo[] = FACTORIES.map(({ type, defaultBaseUrl, usesBaseUrl, fields, defaultBaseUrlFor, presets }) => ({
  type,
  defaultBaseUrl,
  usesBaseUrl,
  ...(fields === undefined ? {} : { fields }),
  ...(defaultBaseUrlFor === undefined ? {} : { defaultBaseUrlFor }),
  ...(presets === undefined ? {} : { presets }),
}));

export function createAdapter(config: ProviderConfig): ProviderAdapter {
  const factory = FACTORIES.find((f) => f.type === config.type);
  if (factory === undefined) throw new Error(`no adapter for provider type ${config.type}`);
  return factory.create(config);
}
