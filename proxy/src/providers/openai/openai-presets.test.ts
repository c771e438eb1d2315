import { parseProvidersFile } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { createAdapter, PROVIDER_TYPES } from '../registry.js';
import { OPENAI_PRESETS } from './openai-presets.js';

describe('OpenAI-compatible presets', () => {
  it('are the services the providers file names', () => {
    expect(Object.keys(OPENAI_PRESETS)).toEqual(['groq', 'mistral', 'deepseek', 'together', 'fireworks', 'openrouter', 'xai', 'ollama', 'vllm']);
  });

  for (const [name, preset] of Object.entries(OPENAI_PRESETS)) {
    it(`${name}: two lines give the base URL and the token-limit field, and an adapter`, () => {
      const config = parseProvidersFile(`providers:\n  - name: ${name}\n    type: openai\n    preset: ${name}\n    api_key: k\n    models: [some-model]\n`, 'p.yaml', {}, PROVIDER_TYPES).providers[0]!;
      expect(config.base_url).toBe(preset.base_url);
      expect(config.options.max_tokens_field).toBe(preset.options.max_tokens_field);
      expect(createAdapter(config).type).toBe('openai');
    });
  }
});
