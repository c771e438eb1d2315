import { createRequire } from 'node:module';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProvidersConfig } from '@gateway/shared';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../test-support/otlp-receiver.js';
import type { RunningWireMock } from '../../test-support/wire-mock.js';
import { startOpenAiWireMock } from './wire-mocks/openai-wire-mock.js';
import { PROVIDER_TYPES } from '../src/providers/registry.js';
import { startTracing } from '../src/tracing/start-tracing.js';
import { startHarness, type Harness } from './harness.js';

/**
 * Tracing off costs nothing: without an OTLP endpoint (or with the SDK switched off) the proxy has
 * no tracer, loads no OpenTelemetry SDK module, sends nothing, and its provider calls carry no
 * trace context. Its own file, so that no traced proxy of another test has loaded the SDK.
 */
let receiver: OtlpReceiver;
let upstream: RunningWireMock;
let untraced: Harness;
let disabled: Harness;
const keys = new Map<Harness, TestKey>();

const providers = () => `providers:
  - name: up
    type: openai
    base_url: ${upstream.baseUrl}/v1
    models: [{ id: served, upstream: conf-text }]
`;

/** OpenTelemetry SDK modules loaded in this process (the API alone is loaded by prom-client's process metrics). */
function sdkModulesLoaded(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((path) => /@opentelemetry\/(sdk-trace|exporter-trace|core|resources|otlp)/.test(path));
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  upstream = await startOpenAiWireMock();
  // Everything of tracing configured but the endpoint.
  untraced = await startHarness('tracing-off', providers(), { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '10' });
  disabled = await startHarness('tracing-disabled', providers(), { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true', OTEL_BSP_SCHEDULE_DELAY: '10' });
  for (const h of [untraced, disabled]) keys.set(h, await projectTestKey(h.redis, h.keys));
});

afterAll(async () => {
  for (const h of [untraced, disabled]) await h?.stop();
  await upstream?.close();
  await receiver?.close();
});

async function chat(h: Harness): Promise<number> {
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': (keys.get(h) as TestKey).key, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    body: JSON.stringify({ model: 'served', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('tracing off', () => {
  it('has no tracer, loads no SDK module, and sends the provider no trace context', async () => {
    for (const h of [untraced, disabled]) {
      expect(h.proxy.deps.tracer).toBeNull();
      expect(await chat(h)).toBe(200);
      expect(upstream.lastRequest()?.headers.traceparent).toBeUndefined();
    }
    expect(sdkModulesLoaded()).toEqual([]);
    await disabled.proxy.drain();
    expect(receiver.exports()).toEqual([]);
  });

  // Last: it loads the SDK, which the test above proves absent.
  it('loads the SDK only once an endpoint is configured (the check above can see it)', async () => {
    const tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, loadProvidersConfig({}, PROVIDER_TYPES), pino({ level: 'silent' }));
    expect(tracer).not.toBeNull();
    expect(sdkModulesLoaded().length).toBeGreaterThan(0);
    await tracer?.close();
  });
});
