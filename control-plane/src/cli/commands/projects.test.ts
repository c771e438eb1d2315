import { describe, expect, it } from 'vitest';
import { UsageError } from '../cli-errors.js';
import { parseAliases } from './projects.js';

describe('gatewayctl --model-aliases', () => {
  it('reads asked=served pairs, and none', () => {
    expect(parseAliases('claude-opus-5-5=claude-sonnet-5; gpt-6 = gpt-5-mini')).toEqual({ 'claude-opus-5-5': 'claude-sonnet-5', 'gpt-6': 'gpt-5-mini' });
    expect(parseAliases('none')).toBeNull();
  });

  it('refuses what is no pair', () => {
    expect(() => parseAliases('claude')).toThrow(UsageError);
    expect(() => parseAliases('=x')).toThrow(UsageError);
    expect(() => parseAliases(';')).toThrow(UsageError);
  });
});
