import { diag, DiagLogLevel, type Tracer } from '@opentelemetry/api';
import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config/tracing-config.js';

/**
 * The OpenTelemetry SDK as the gateway uses it, for the proxy, the control plane and the writer
 * alike: a tracer provider of its own (nothing registered globally, so several services may share
 * a process), a batch span processor and an OTLP/HTTP exporter in the configured encoding.
 *
 * Not exported by shared's index: a service imports `@gateway/shared/otel-sdk` dynamically, only
 * when tracing is on, so no OpenTelemetry module is loaded otherwise.
 */
/** What the SDK logs through (a pino logger fits). */
export interface TracingLog {
  warn(facts: object, message: string): void;
}

export interface TracingSdk {
  tracer: Tracer;
  shutdown(): Promise<void>;
}

function sampler(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

async function exporter(config: TracingConfig): Promise<SpanExporter> {
  // Values are URL-encoded in the variable (the specification's format); the SDK's own parser.
  const headers = Object.assign({}, ...config.headers.map((h) => parseKeyPairsIntoRecord(h))) as Record<string, string>;
  const options = { url: config.url, headers };
  if (config.protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options);
}

/** Export failures (collector down, refused) as warnings, at most one a minute: spans are dropped, requests go on. */
function reportExportErrors(log: TracingLog): void {
  let last = 0;
  const warn = (message: string) => {
    const now = Date.now();
    if (now - last < 60_000) return;
    last = now;
    log.warn({ reason: message.slice(0, 300) }, 'trace export failed; spans are being dropped');
  };
  const ignore = () => {};
  diag.setLogger({ error: warn, warn, info: ignore, debug: ignore, verbose: ignore }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}

export async function startTracingSdk(config: TracingConfig, scope: string, log: TracingLog): Promise<TracingSdk> {
  reportExportErrors(log);
  // OTEL_RESOURCE_ATTRIBUTES adds to the resource; the service name is the one configured.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': config.serviceName }));
  const provider = new BasicTracerProvider({
    resource,
    sampler: sampler(config),
    spanProcessors: [new BatchSpanProcessor(await exporter(config), { scheduledDelayMillis: config.scheduleDelayMs })],
  });
  return {
    tracer: provider.getTracer(scope),
    // The last export may fail (collector down, too many batches at once): stopping goes on.
    shutdown: () => provider.shutdown().catch((err: Error) => log.warn({ reason: err.message }, 'traces not all exported at shutdown')),
  };
}
