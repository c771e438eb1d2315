import type { ProviderConfig } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { createAdapter } from './registry.js';

/** Which entries run their batch lines at the provider's own batch API: `batch: native`, checked at start. */
function entry(type: string, batch?: string): ProviderConfig {
  return {
    name: `${type}-entry`,
    type,
    base_url: type === 'mock' ? null : 'http://127.0.0.1:9/v1',
    api_key: 'sk-test-0123456789',
    models: [{ id: 'm', upstream: 'm', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 1000,
    idle_timeout_ms: 1000,
    max_connections: null,
    max_queued: null,
    options: {},
    ...(batch === undefined ? {} : { settings: { batch } }),
  };
}

describe('batch: native | gateway', () => {
  it('gives openai, azure and anthropic entries their batch API only when asked', async () => {
    for (const type of ['openai', 'azure', 'anthropic']) {
      const native = createAdapter(entry(type, 'native'));
      const gateway = createAdapter(entry(type, 'gateway'));
      const unset = createAdapter(entry(type));
      expect(native.batches).toBeDefined();
      expect(gateway.batches).toBeUndefined();
      expect(unset.batches).toBeUndefined();
      await Promise.all([native.close(), gateway.close(), unset.close()]);
    }
    expect(createAdapter(entry('mock')).batches).toBeUndefined();
  });

  it('refuses another value at start, naming the provider', () => {
    expect(() => createAdapter(entry('openai', 'sometimes'))).toThrow(/provider openai-entry: "batch" must be native or gateway/);
    expect(() => createAdapter(entry('anthropic', 'yes'))).toThrow(/provider anthropic-entry: "batch" must be native or gateway/);
  });
});
