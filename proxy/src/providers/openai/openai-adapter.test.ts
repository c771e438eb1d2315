import { afterAll, beforeAll } from 'vitest';
import type { RunningWireMock } from '../../../../test-support/wire-mock.js';
import { PROVIDER_KEY, runAdapterConformance } from '../conformance.case.js';
import { OpenAiAdapter } from './openai-adapter.js';
import { startOpenAiWireMock } from './openai-wire-mock.case.js';

let mock: RunningWireMock;
beforeAll(async () => {
  mock = await startOpenAiWireMock();
});
afterAll(async () => {
  await mock?.close();
});

const adapter = () =>
  new OpenAiAdapter({
    name: 'upstream',
    type: 'openai',
    base_url: `${mock.baseUrl}/v1`,
    api_key: PROVIDER_KEY,
    models: [{ id: 'gw-model', upstream: 'conf-text', price: null }],
    connect_timeout_ms: 1000,
    timeout_ms: 300,
    idle_timeout_ms: 5000,
    max_connections: 4,
    max_queued: 1024,
    options: {},
  });

runAdapterConformance('openai', () => ({
  model: 'gpt-4o-mini',
  adapter,
  wire: () => ({ adapter, mock, reportsCached: true, keyHeader: 'authorization' }),
}));
