import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimatePromptTokens, estimateTextTokens, IMAGE_TOKENS } from './token-estimate.js';

/**
 * token-estimate.samples.json holds texts and chat requests with their real token counts under
 * o200k_base (GPT-4o) and cl100k_base (GPT-4), counted once with a tokenizer (requests with
 * OpenAI's chat and function-definition framing), so this test needs none.
 */
interface Counted {
  name: string;
  o200k: number;
  cl100k: number;
}
const samples = JSON.parse(readFileSync(new URL('./token-estimate.samples.json', import.meta.url), 'utf8')) as {
  texts: (Counted & { text: string })[];
  requests: (Counted & { body: Record<string, unknown> })[];
};
const real = (s: Counted) => Math.max(s.o200k, s.cl100k);

describe('estimateTextTokens', () => {
  it.each(samples.texts.map((s) => [s.name, s] as const))('never counts fewer tokens than a real tokenizer: %s', (_name, sample) => {
    expect(estimateTextTokens(sample.text)).toBeGreaterThanOrEqual(real(sample));
  });

  it('stays within about twice the real count for prose and code', () => {
    for (const name of ['english', 'chat', 'fr', 'es', 'de', 'python', 'readme@0', 'ts@0']) {
      const sample = samples.texts.find((s) => s.name === name);
      expect(sample, name).toBeDefined();
      expect(estimateTextTokens(sample!.text) / real(sample!), name).toBeLessThanOrEqual(2.3);
    }
  });

  it('weighs a number by its groups of three digits, as both tokenizers split it', () => {
    // 600 words like `w123` are 1,200 tokens; digits weighed one by one made them 3,126.
    const words = Array.from({ length: 600 }, (_, i) => `w${100 + ((i * 37) % 900)}`).join(' ');
    expect(estimateTextTokens(words)).toBeGreaterThanOrEqual(1_200);
    expect(estimateTextTokens(words)).toBeLessThanOrEqual(1_700);
    // A long number: exactly one token per started group of three, plus the per-text slack.
    expect(estimateTextTokens('1'.repeat(999)) - estimateTextTokens('1'.repeat(3))).toBe(332);
    expect(estimateTextTokens('1234')).toBeGreaterThan(estimateTextTokens('123'));
  });

  it('counts nothing for nothing', () => {
    expect(estimateTextTokens('')).toBe(0);
  });
});

describe('estimatePromptTokens', () => {
  it.each(samples.requests.map((s) => [s.name, s] as const))('never counts fewer prompt tokens than OpenAI bills: %s', (_name, sample) => {
    expect(estimatePromptTokens(sample.body)).toBeGreaterThanOrEqual(real(sample));
  });

  it('counts what is billed, not the JSON around it', () => {
    const body = { model: 'a-model-with-a-very-long-name-that-is-not-billed', messages: [{ role: 'user', content: 'Say hello to me' }], temperature: 0.25, max_tokens: 16 };
    // A 4-word prompt and max_tokens 16 fit a 40-token quota.
    expect(estimatePromptTokens(body) + 16).toBeLessThanOrEqual(40);
    expect(estimatePromptTokens({ ...body, model: 'm', user: 'x'.repeat(5_000) })).toBe(estimatePromptTokens(body));
  });

  it('counts tool definitions, tool-call arguments and images', () => {
    const base = { messages: [{ role: 'user', content: 'hi' }] };
    const tool = { type: 'function', function: { name: 'lookup', description: 'Look a word up.', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } } };
    expect(estimatePromptTokens({ ...base, tools: [tool] })).toBeGreaterThan(estimatePromptTokens(base) + 20);
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'lookup', arguments: '{"word":"serendipity"}' } }] };
    expect(estimatePromptTokens({ messages: [...base.messages, call] })).toBeGreaterThan(estimatePromptTokens(base) + 10);
    const image = { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } }] };
    expect(estimatePromptTokens({ messages: [image] })).toBe(estimatePromptTokens(base) + IMAGE_TOKENS);
  });
});
