import { afterAll, beforeAll } from 'vitest';
import { spawnMockUpstream, type MockUpstreamProcess } from '../../../../test-support/processes.js';
import { runAdapterConformance } from '../conformance.case.js';
import { OpenAiAdapter } from './openai-adapter.js';

let upstream: MockUpstreamProcess;
beforeAll(async () => {
  upstream = await spawnMockUpstream({ MOCK_CHUNKS: '20', MOCK_GAP_MS: '2' });
});
afterAll(async () => {
  await upstream?.stop();
});

runAdapterConformance('openai', () => ({
  model: 'gpt-4o-mini',
  adapter: () =>
    new OpenAiAdapter({
      name: 'upstream',
      type: 'openai',
      base_url: upstream.baseUrl,
      api_key: 'sk-test',
      models: ['gpt-4o-mini'],
      connect_timeout_ms: 1000,
      timeout_ms: 5000,
      idle_timeout_ms: 5000,
      max_queued: 1024, max_connections: 4,
      options: {},
    }),
}));
