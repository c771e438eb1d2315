import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadTracingConfig } from './tracing-config.js';

describe('tracing configuration', () => {
  it('is off without an endpoint, and when switched off', () => {
    expect(loadTracingConfig({}, 'gateway-proxy')).toBeNull();
    expect(loadTracingConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }, 'gateway-proxy')).toBeNull();
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, 'gateway-proxy')).toBeNull();
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, 'gateway-proxy')).toBeNull();
  });

  it('appends /v1/traces to the general endpoint and takes the traces endpoint as it is', () => {
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 's')?.url).toBe('http://collector:4318/v1/traces');
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/prefix/' }, 's')?.url).toBe('https://otel.example/prefix/v1/traces');
    expect(
      loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/custom/path' }, 's')?.url,
    ).toBe('http://other:4318/custom/path');
  });

  it('has the specification defaults and the service default name', () => {
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'gateway-writer')).toEqual({
      url: 'http://c:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: [],
      serviceName: 'gateway-writer',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      scheduleDelayMs: 5000,
      captureContent: false,
    });
  });

  it('reads protocol, headers, service name, sampler, schedule delay and content capture', () => {
    const config = loadTracingConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=t1',
        OTEL_SERVICE_NAME: 'edge-gateway',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_GATEWAY_CAPTURE_CONTENT: 'true',
      },
      'gateway-proxy',
    );
    expect(config).toEqual({
      url: 'http://c:4318/v1/traces',
      protocol: 'http/json',
      headers: ['authorization=Bearer%20abc', 'x-tenant=t1'],
      serviceName: 'edge-gateway',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.01,
      scheduleDelayMs: 50,
      captureContent: true,
    });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(() => loadTracingConfig({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 's')).toThrow(ConfigError);
    expect(() => loadTracingConfig({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 's')).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
    expect(() => loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 's')).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must use http: or https:/);
    expect(() => loadTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, 's')).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL/);
    expect(() => loadTracingConfig({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' }, 's')).toThrow(/OTEL_TRACES_SAMPLER must be one of/);
    expect(() => loadTracingConfig({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, 's')).toThrow(/OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    expect(() => loadTracingConfig({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, 's')).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => loadTracingConfig({ ...base, OTEL_TRACES_EXPORTER: 'zipkin' }, 's')).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(() => loadTracingConfig({ ...base, OTEL_GATEWAY_CAPTURE_CONTENT: 'sometimes' }, 's')).toThrow(/OTEL_GATEWAY_CAPTURE_CONTENT must be true or false/);
  });
});
