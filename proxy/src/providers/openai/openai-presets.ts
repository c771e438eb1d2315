import type { ProviderPreset } from '@gateway/shared';

/**
 * OpenAI-compatible services by name (`type: openai`, `preset: groq`): the base URL of their
 * Chat Completions API and the field their models take the output-token limit in, so that a
 * providers-file entry needs only its name, preset, key and models. An entry's own `base_url` or
 * `options.max_tokens_field` wins. Groq and xAI document `max_tokens` as deprecated in favour of
 * `max_completion_tokens`; the others take `max_tokens`.
 */
export const OPENAI_PRESETS: Readonly<Record<string, ProviderPreset>> = {
  groq: { base_url: 'https://api.groq.com/openai/v1', options: { max_tokens_field: 'max_completion_tokens' } },
  mistral: { base_url: 'https://api.mistral.ai/v1', options: { max_tokens_field: 'max_tokens' } },
  deepseek: { base_url: 'https://api.deepseek.com/v1', options: { max_tokens_field: 'max_tokens' } },
  together: { base_url: 'https://api.together.xyz/v1', options: { max_tokens_field: 'max_tokens' } },
  fireworks: { base_url: 'https://api.fireworks.ai/inference/v1', options: { max_tokens_field: 'max_tokens' } },
  openrouter: { base_url: 'https://openrouter.ai/api/v1', options: { max_tokens_field: 'max_tokens' } },
  xai: { base_url: 'https://api.x.ai/v1', options: { max_tokens_field: 'max_completion_tokens' } },
  ollama: { base_url: 'http://localhost:11434/v1', options: { max_tokens_field: 'max_tokens' } },
  vllm: { base_url: 'http://localhost:8000/v1', options: { max_tokens_field: 'max_tokens' } },
};
