import { loadTracingConfig, type Env } from '@gateway/shared';
import type { Logger } from 'pino';
import type { ServiceTracer } from './service-tracer.js';

export const CONTROL_PLANE_SERVICE_NAME = 'gateway-control-plane';
export const WRITER_SERVICE_NAME = 'gateway-writer';

/**
 * The service's tracer, or null when tracing is off (no OTLP endpoint): OpenTelemetry is
 * imported only when it is on.
 */
export async function startTracing(env: Env, serviceName: string, log: Logger): Promise<ServiceTracer | null> {
  const config = loadTracingConfig(env, serviceName);
  if (config === null) return null;
  const [{ startTracingSdk }, { OtelServiceTracer }] = await Promise.all([import('@gateway/shared/otel-sdk'), import('./otel-service-tracer.js')]);
  const sdk = await startTracingSdk(config, serviceName, log);
  const url = new URL(config.url);
  log.info({ url: `${url.protocol}//${url.host}${url.pathname}`, protocol: config.protocol, sampler: config.sampler }, 'tracing on');
  return new OtelServiceTracer(sdk.tracer, sdk.shutdown);
}
