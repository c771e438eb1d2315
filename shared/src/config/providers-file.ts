import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { ConfigError, type Env } from './env.js';

/**
 * The providers file (GATEWAY_CONFIG, YAML; JSON is YAML too), validated at start so a typo is a
 * start-up error naming the provider and the field, never a 502 at three in the morning.
 */
export interface ProviderConfig {
  /** Recorded in usage records and metrics. */
  name: string;
  /** Wire protocol; must name an adapter the proxy has. */
  type: string;
  base_url: string | null;
  /** Provider's own credential, injected upstream; never logged. */
  api_key: string | null;
  models: string[];
  /** Time allowed to open a connection to the provider. */
  connect_timeout_ms: number;
  /** Time allowed until the provider's response headers arrive. */
  timeout_ms: number;
  /** Longest silence allowed between two chunks of a response body. */
  idle_timeout_ms: number;
  /** Connections kept open to the provider per proxy process. */
  max_connections: number;
  /** Requests allowed to wait for a connection per proxy process; beyond it, 503 at once. */
  max_queued: number;
  /** Adapter-specific settings, checked by the adapter. */
  options: Record<string, unknown>;
}

export interface ProvidersConfig {
  /** File path, or "built-in default". */
  source: string;
  providers: ProviderConfig[];
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const DEFAULTS = { connect_timeout_ms: 5_000, timeout_ms: 60_000, idle_timeout_ms: 60_000, max_connections: 256, max_queued: 1_024 };

/** Models the offline mock provider serves when no providers file is given. */
export const DEFAULT_MOCK_MODELS = ['mock-1', 'mock-1-mini'];

/** Providers used when GATEWAY_CONFIG is not set: the offline mock, plus OpenAI if its key is present. */
export function defaultProviders(env: Env): ProvidersConfig {
  const providers: ProviderConfig[] = [
    { name: 'mock', type: 'mock', base_url: null, api_key: null, models: [...DEFAULT_MOCK_MODELS], ...DEFAULTS, options: {} },
  ];
  const openaiKey = env.OPENAI_API_KEY;
  if (openaiKey) {
    providers.push({
      name: 'openai',
      type: 'openai',
      base_url: env.OPENAI_BASE_URL || 'https://api.openai.com/v1',
      api_key: openaiKey,
      models: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o4-mini'],
      ...DEFAULTS,
      options: {},
    });
  }
  return { source: 'built-in default', providers };
}

export function loadProvidersConfig(env: Env, knownTypes: readonly string[]): ProvidersConfig {
  const path = env.GATEWAY_CONFIG;
  if (path === undefined || path === '') return defaultProviders(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`GATEWAY_CONFIG: cannot read ${path} (${code})`);
  }
  return parseProvidersFile(text, path, env, knownTypes);
}

export function parseProvidersFile(text: string, source: string, env: Env, knownTypes: readonly string[]): ProvidersConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const where = err instanceof YAMLParseError && err.linePos ? ` at line ${err.linePos[0].line}` : '';
    throw new ConfigError(`${source}: not valid YAML${where}`);
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { providers?: unknown }).providers)) {
    throw new ConfigError(`${source}: expected a top-level "providers:" list`);
  }
  const list = (doc as { providers: unknown[] }).providers;
  if (list.length === 0) throw new ConfigError(`${source}: "providers" is empty`);

  const providers = list.map((entry, i) => parseProvider(entry, `${source}: providers[${i}]`, env, knownTypes));
  const names = new Set<string>();
  const modelOwner = new Map<string, string>();
  for (const p of providers) {
    if (names.has(p.name)) throw new ConfigError(`${source}: provider name "${p.name}" is used twice`);
    names.add(p.name);
    for (const m of p.models) {
      const owner = modelOwner.get(m);
      if (owner !== undefined) throw new ConfigError(`${source}: model "${m}" is listed by both "${owner}" and "${p.name}"`);
      modelOwner.set(m, p.name);
    }
  }
  return { source, providers };
}

function parseProvider(entry: unknown, at: string, env: Env, knownTypes: readonly string[]): ProviderConfig {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${at}: must be a mapping`);
  const e = entry as Record<string, unknown>;
  const name = e.name;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new ConfigError(`${at}: "name" must be 1-64 letters, digits, '.', '_' or '-'`);
  }
  const where = `${at} (${name})`;
  const type = e.type;
  if (typeof type !== 'string' || !knownTypes.includes(type)) {
    throw new ConfigError(`${where}: "type" must be one of ${knownTypes.join(', ')}, got ${JSON.stringify(type ?? null)}`);
  }

  let base_url: string | null = null;
  if (e.base_url !== undefined && e.base_url !== null) {
    if (typeof e.base_url !== 'string') throw new ConfigError(`${where}: "base_url" must be a string`);
    const expanded = expandVars(e.base_url, `${where}: "base_url"`, env);
    let url: URL;
    try {
      url = new URL(expanded);
    } catch {
      throw new ConfigError(`${where}: "base_url" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${where}: "base_url" must be http or https`);
    base_url = expanded.replace(/\/+$/, '');
  } else if (type !== 'mock') {
    throw new ConfigError(`${where}: "base_url" is required for type ${type}`);
  }

  let api_key: string | null = null;
  if (e.api_key !== undefined && e.api_key !== null) {
    if (typeof e.api_key !== 'string') throw new ConfigError(`${where}: "api_key" must be a string`);
    api_key = expandVars(e.api_key, `${where}: "api_key"`, env) || null;
  }

  const models = e.models;
  if (!Array.isArray(models) || models.length === 0) throw new ConfigError(`${where}: "models" must be a non-empty list`);
  const seen = new Set<string>();
  for (const [j, m] of models.entries()) {
    if (typeof m !== 'string' || m.length === 0 || m.length > 256) throw new ConfigError(`${where}: models[${j}] must be a non-empty string`);
    if (seen.has(m)) throw new ConfigError(`${where}: model "${m}" is listed twice`);
    seen.add(m);
  }

  const options = e.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new ConfigError(`${where}: "options" must be a mapping`);

  return {
    name,
    type,
    base_url,
    api_key,
    models: models as string[],
    connect_timeout_ms: positiveInt(e.connect_timeout_ms, DEFAULTS.connect_timeout_ms, `${where}: "connect_timeout_ms"`),
    timeout_ms: positiveInt(e.timeout_ms, DEFAULTS.timeout_ms, `${where}: "timeout_ms"`),
    idle_timeout_ms: positiveInt(e.idle_timeout_ms, DEFAULTS.idle_timeout_ms, `${where}: "idle_timeout_ms"`),
    max_connections: positiveInt(e.max_connections, DEFAULTS.max_connections, `${where}: "max_connections"`),
    max_queued: nonNegativeInt(e.max_queued, DEFAULTS.max_queued, `${where}: "max_queued"`),
    options: options as Record<string, unknown>,
  };
}

function nonNegativeInt(value: unknown, fallback: number, what: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ConfigError(`${what} must be a whole number, 0 or more`);
  return value;
}

function positiveInt(value: unknown, fallback: number, what: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new ConfigError(`${what} must be a positive integer`);
  return value;
}

/** `${VAR}` from the environment; a missing variable is an error naming it (never its value). */
function expandVars(value: string, what: string, env: Env): string {
  return value.replace(VAR_RE, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw new ConfigError(`${what} refers to \${${name}}, which is not set`);
    return v;
  });
}
