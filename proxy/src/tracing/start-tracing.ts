import { loadTracingConfig, type Env, type ProvidersConfig } from '@gateway/shared';
import type { Logger } from 'pino';
import type { ProviderServer } from './otel-tracer.js';
import type { GatewayTracer } from './request-trace.js';

export const PROXY_SERVICE_NAME = 'gateway-proxy';

/**
 * The proxy's tracer, or null when tracing is off (no OTLP endpoint configured): then no module
 * of OpenTelemetry is even loaded, and every hook on the request path is one null check.
 */
export async function startTracing(env: Env, providers: ProvidersConfig, log: Logger): Promise<GatewayTracer | null> {
  const config = loadTracingConfig(env, PROXY_SERVICE_NAME);
  if (config === null) return null;
  const [{ startTracingSdk }, { OtelGatewayTracer }] = await Promise.all([import('@gateway/shared/otel-sdk'), import('./otel-tracer.js')]);
  const sdk = await startTracingSdk(config, PROXY_SERVICE_NAME, log);
  log.info({ url: redactedUrl(config.url), protocol: config.protocol, sampler: config.sampler, captureContent: config.captureContent }, 'tracing on');
  return new OtelGatewayTracer(sdk.tracer, providerServers(providers), config.captureContent, sdk.shutdown);
}

/** server.address and server.port of each provider with a base URL. */
function providerServers(providers: ProvidersConfig): Map<string, ProviderServer> {
  const servers = new Map<string, ProviderServer>();
  for (const p of providers.providers) {
    if (p.base_url === null) continue;
    const url = new URL(p.base_url);
    servers.set(p.name, { address: url.hostname, port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port) });
  }
  return servers;
}

/** The collector's address for the log line, without credentials a URL may carry. */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}
