import { describe, expect, it } from 'vitest';
import { isReasoningModel, limitNeedsMove, moveLimit, tokenLimitField } from './token-limit-field.js';

describe('token limit field', () => {
  it('recognises the o-series and gpt-5 family by the upstream name, fine-tunes included', () => {
    for (const name of ['o1', 'o1-mini', 'o1-preview', 'o3', 'o3-mini', 'o3-pro', 'o4-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5-nano', 'gpt-5.1', 'gpt-5.2-codex', 'ft:o4-mini-2025-04-16:org::abc']) {
      expect(isReasoningModel(name), name).toBe(true);
    }
    for (const name of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-50', 'o10', 'omni-moderation-latest', 'my-o3-deployment', 'llama-3.1-8b', 'ft:gpt-4o-mini:org::x']) {
      expect(isReasoningModel(name), name).toBe(false);
    }
  });

  it('lets the option decide for every model of the provider', () => {
    expect(tokenLimitField('gpt-4o', null)).toBeNull();
    expect(tokenLimitField('o3', null)).toBe('max_completion_tokens');
    expect(tokenLimitField('o3', 'max_tokens')).toBe('max_tokens');
    expect(tokenLimitField('deployment-7', 'max_completion_tokens')).toBe('max_completion_tokens');
  });

  it('moves the limit only when it is in the other field, keeping max_completion_tokens over max_tokens', () => {
    expect(limitNeedsMove({ max_completion_tokens: 5 }, 'max_completion_tokens')).toBe(false);
    expect(limitNeedsMove({ max_tokens: 5 }, null)).toBe(false);
    expect(limitNeedsMove({ max_tokens: 5 }, 'max_completion_tokens')).toBe(true);
    const both: Record<string, unknown> = { max_tokens: 9, max_completion_tokens: 5 };
    moveLimit(both, 'max_tokens');
    expect(both).toEqual({ max_tokens: 5 });
    const nulls: Record<string, unknown> = { max_tokens: null };
    moveLimit(nulls, 'max_completion_tokens');
    expect(nulls).toEqual({});
  });
});
