import { runAdapterConformance } from '../conformance.case.js';
import { MockAdapter } from './mock-adapter.js';

runAdapterConformance('mock', () => ({
  model: 'mock-1',
  adapter: () =>
    new MockAdapter({
      name: 'mock',
      type: 'mock',
      base_url: null,
      api_key: null,
      models: ['mock-1'],
      connect_timeout_ms: 1000,
      timeout_ms: 1000,
      idle_timeout_ms: 1000,
      max_connections: 1,
      options: { chunks: 20, gap_ms: 1 },
    }),
}));
