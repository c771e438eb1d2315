import { ConfigError, envBool, envInt, envOptional, type Env } from './env.js';

/**
 * OpenTelemetry tracing settings, read from the standard OTEL_* variables: tracing is on only
 * when an OTLP endpoint is set. Read from the environment the service was given (not from
 * process.env behind its back), so one process may run a traced and an untraced service side by
 * side; the few variables not read here are left to the OpenTelemetry SDK (docs/tracing.md).
 */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: OtlpProtocol;
  /**
   * Headers sent with every export (`key=value` pairs, comma-separated, values URL-encoded), the
   * general list then the traces-only one; they often hold a collector's credential.
   */
  headers: string[];
  serviceName: string;
  sampler: TracesSampler;
  /** The ratio of the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG), 0–1. */
  samplerRatio: number;
  /** Longest a finished span waits before its batch is exported, in ms. */
  scheduleDelayMs: number;
  /** Prompts and completions are recorded on spans (OTEL_GATEWAY_CAPTURE_CONTENT=true); never by default. */
  captureContent: boolean;
}

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** The traces URL, or null when no endpoint is set (tracing off). */
function tracesUrl(env: Env): string | null {
  const specific = envOptional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const general = envOptional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const name = specific !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const raw = specific ?? general;
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must use http: or https:, got ${url.protocol}`);
  // The specification: the signal's own endpoint is used as it is; the general one is a base
  // to which the signal's path is appended.
  if (specific !== undefined) return url.href;
  return `${raw.replace(/\/+$/, '')}/v1/traces`;
}

function protocol(env: Env): OtlpProtocol {
  const name = envOptional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = envOptional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? envOptional(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (PROTOCOLS.includes(value)) return value as OtlpProtocol;
  // gRPC would need another exporter and its native dependencies; a collector listens for OTLP/HTTP on 4318.
  throw new ConfigError(`${name} must be http/protobuf or http/json, got "${value}" (send OTLP over HTTP, usually port 4318)`);
}

function sampler(env: Env): { sampler: TracesSampler; samplerRatio: number } {
  const value = envOptional(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(TRACES_SAMPLERS as readonly string[]).includes(value)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(', ')}, got "${value}"`);
  }
  const arg = envOptional(env, 'OTEL_TRACES_SAMPLER_ARG');
  let samplerRatio = 1;
  if (arg !== undefined && value.endsWith('traceidratio')) {
    samplerRatio = Number(arg);
    if (!(samplerRatio >= 0 && samplerRatio <= 1)) {
      throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`);
    }
  }
  return { sampler: value as TracesSampler, samplerRatio };
}

/** Tracing settings of a service, or null when tracing is off (no endpoint, or switched off). */
export function loadTracingConfig(env: Env, defaultServiceName: string): TracingConfig | null {
  if (envBool(env, 'OTEL_SDK_DISABLED', false)) return null;
  const exporter = envOptional(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp';
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  const url = tracesUrl(env);
  if (url === null) return null;
  return {
    url,
    protocol: protocol(env),
    headers: [envOptional(env, 'OTEL_EXPORTER_OTLP_HEADERS'), envOptional(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')].filter((h): h is string => h !== undefined),
    serviceName: envOptional(env, 'OTEL_SERVICE_NAME') ?? defaultServiceName,
    ...sampler(env),
    scheduleDelayMs: envInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 0, 3_600_000),
    captureContent: envBool(env, 'OTEL_GATEWAY_CAPTURE_CONTENT', false),
  };
}
