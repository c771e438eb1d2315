import type { ProviderConfig } from '@gateway/shared';

/**
 * The providers file's `options:` for a provider of type anthropic, checked when the proxy
 * starts: a misspelt option is an error naming the provider, not a setting silently ignored.
 */
export interface AnthropicOptions {
  /** max_tokens sent when the client gave none (Anthropic requires one). */
  defaultMaxTokens: number;
}

export const DEFAULT_MAX_TOKENS = 4096;
const KNOWN = new Set(['default_max_tokens']);

export function parseAnthropicOptions(config: ProviderConfig): AnthropicOptions {
  for (const name of Object.keys(config.options)) {
    if (!KNOWN.has(name)) throw new Error(`provider ${config.name}: unknown option "${name}" for type anthropic (known: ${[...KNOWN].join(', ')})`);
  }
  const value = config.options.default_max_tokens ?? DEFAULT_MAX_TOKENS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new Error(`provider ${config.name}: option "default_max_tokens" must be a positive integer`);
  }
  return { defaultMaxTokens: value };
}
