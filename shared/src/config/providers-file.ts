import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { ConfigError, type Env } from './env.js';
import { mcpServersOf, type McpServerConfig } from './mcp-servers.js';

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
  /** Model ids clients send, each with the name sent to this provider and its price. */
  models: ModelEntry[];
  /** Time allowed to open a connection to the provider. */
  connect_timeout_ms: number;
  /** Time allowed until the provider's response headers arrive. */
  timeout_ms: number;
  /** Longest silence allowed between two chunks of a response body. */
  idle_timeout_ms: number;
  /** Connections to the provider per proxy worker; null (the default): as many as requests in flight. */
  max_connections: number | null;
  /** Requests allowed to wait for a connection per proxy worker, beyond it 503 at once; null (the default): no bound. */
  max_queued: number | null;
  /** Adapter-specific settings, checked by the adapter. */
  options: Record<string, unknown>;
  /**
   * The type's own top-level fields (ProviderTypeInfo.fields: a Bedrock region and credentials, a
   * Vertex project), `${VAR}`s expanded; absent for types that declare none. Secrets among them are
   * never logged, like `api_key`.
   */
  settings?: Readonly<Record<string, string>>;
  /** The preset this entry was filled in from (ProviderTypeInfo.presets), when it named one. */
  preset?: string;
}

/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Prompt tokens the provider read from its cache (defaults to `input`). */
  cached_input: number;
  /**
   * Prompt tokens the provider wrote to its cache (Anthropic's cache creation, Bedrock's cache
   * write). Defaults to `input`: a price list without it bills writes as plain prompt tokens.
   */
  cache_write: number;
  /**
   * What a line of a provider-run batch costs (`batch: native`), per million tokens; absent: half
   * of `input` and `output`, as OpenAI and Anthropic charge batches.
   */
  batch?: { input: number; output: number };
}

/**
 * The price of a provider-run batch line: `price.batch`, else half of the model's price; the
 * cache prices are scaled as the input price is.
 */
export function batchPrice(price: ModelPrice): ModelPrice {
  const input = price.batch?.input ?? price.input / 2;
  const output = price.batch?.output ?? price.output / 2;
  const scale = price.input === 0 ? 0.5 : input / price.input;
  return { input, output, cached_input: price.cached_input * scale, cache_write: price.cache_write * scale };
}

export interface ModelEntry {
  /** What clients send. */
  id: string;
  /** What this provider is sent (default: the id). */
  upstream: string;
  price: ModelPrice | null;
  /** Most output tokens one completion may produce: a budget's worst case when the request sets no limit (absent: DEFAULT_MAX_OUTPUT_TOKENS). */
  max_output_tokens?: number;
}

/** A model entry's max_output_tokens when the providers file gives none. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16_384;

export type RouteStrategy = 'fallback' | 'weighted';

export interface RouteConfig {
  strategy: RouteStrategy;
  /** Provider name → weight (weighted routes only). */
  weights: Record<string, number> | null;
  /** Targets tried for one client request (default: every target once). */
  attempts: number | null;
}

export interface CooldownConfig {
  /** Consecutive failures after which a target is skipped. */
  failures: number;
  /** First cooldown; each further one doubles, up to `max_ms`. */
  base_ms: number;
  max_ms: number;
}

export interface ProvidersConfig {
  /** File path, or "built-in default". */
  source: string;
  providers: ProviderConfig[];
  /** Per model id, when the file sets one (otherwise: a fallback chain in file order). */
  routes: Record<string, RouteConfig>;
  cooldown: CooldownConfig;
  /** MCP servers fronted at /mcp/{name} (mcp-servers.ts); empty when the file lists none. */
  mcp_servers: McpServerConfig[];
}

/** What a provider type says about its providers-file entry (from its adapter's folder). */
export interface ProviderTypeInfo {
  type: string;
  /** Used when the entry gives no base_url; null means base_url is required. */
  defaultBaseUrl: string | null;
  /** False for types that reach no network (mock). */
  usesBaseUrl: boolean;
  /** The type's own top-level fields, each required or optional; other types may not use them. */
  fields?: Readonly<Record<string, 'required' | 'optional'>>;
  /** The default base_url when it derives from the type's fields (a region, a location). */
  defaultBaseUrlFor?: (settings: Readonly<Record<string, string>>) => string;
  /**
   * Named services of this wire protocol (`preset: groq`): the base_url used when the entry gives
   * none, and options used unless the entry sets them.
   */
  presets?: Readonly<Record<string, ProviderPreset>>;
}

export interface ProviderPreset {
  base_url: string;
  options: Readonly<Record<string, unknown>>;
}

export const DEFAULT_COOLDOWN: CooldownConfig = { failures: 3, base_ms: 30_000, max_ms: 300_000 };

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const VAR_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const DEFAULTS = { connect_timeout_ms: 5_000, timeout_ms: 60_000, idle_timeout_ms: 60_000, max_connections: null, max_queued: null };

/** Models the offline mock provider serves when no providers file is given. */
export const DEFAULT_MOCK_MODELS = ['mock-1', 'mock-1-mini'];

/** Providers used when GATEWAY_CONFIG is not set: the offline mock, plus OpenAI, Anthropic and Gemini when their keys are present. */
export function defaultProviders(env: Env): ProvidersConfig {
  const providers: ProviderConfig[] = [
    { name: 'mock', type: 'mock', base_url: null, api_key: null, models: DEFAULT_MOCK_MODELS.map(plainModel), ...DEFAULTS, options: {} },
  ];
  // A real provider joins the default only when its key is in the environment; the base URLs of
  // anthropic and gemini are their adapters' defaults.
  // OpenAI itself serves the Responses API: /v1/responses goes to it as it came (`responses: native`).
  // OpenAI and Anthropic run batches sent to their models themselves, at their batch price (`batch: native`).
  const hosted: { key: string | undefined; name: string; type: string; base_url: string | null; models: string[]; settings?: Record<string, string> }[] = [
    { key: env.OPENAI_API_KEY, name: 'openai', type: 'openai', base_url: env.OPENAI_BASE_URL || 'https://api.openai.com/v1', models: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o4-mini'], settings: { responses: 'native', batch: 'native' } },
    { key: env.ANTHROPIC_API_KEY, name: 'anthropic', type: 'anthropic', base_url: 'https://api.anthropic.com', models: ['claude-opus-4-1', 'claude-sonnet-4-5', 'claude-haiku-4-5'], settings: { batch: 'native' } },
    { key: env.GEMINI_API_KEY, name: 'gemini', type: 'gemini', base_url: 'https://generativelanguage.googleapis.com', models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'] },
  ];
  for (const h of hosted) {
    if (!h.key) continue;
    providers.push({ name: h.name, type: h.type, base_url: h.base_url, api_key: h.key, models: h.models.map(plainModel), ...DEFAULTS, options: {}, ...(h.settings === undefined ? {} : { settings: h.settings }) });
  }
  return { source: 'built-in default', providers, routes: {}, cooldown: DEFAULT_COOLDOWN, mcp_servers: [] };
}

function plainModel(id: string): ModelEntry {
  return { id, upstream: id, price: null };
}

export function loadProvidersConfig(env: Env, knownTypes: readonly ProviderTypeInfo[]): ProvidersConfig {
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

export function parseProvidersFile(text: string, source: string, env: Env, knownTypes: readonly ProviderTypeInfo[]): ProvidersConfig {
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
  for (const p of providers) {
    if (names.has(p.name)) throw new ConfigError(`${source}: provider name "${p.name}" is used twice`);
    names.add(p.name);
  }
  const root = doc as Record<string, unknown>;
  const routes = parseRoutes(root.routes, `${source}: routes`, providers);
  const cooldown = parseCooldown(root.cooldown, `${source}: cooldown`);
  return { source, providers, routes, cooldown, mcp_servers: mcpServersOf(root, source, env, expandVars) };
}

function parseRoutes(value: unknown, at: string, providers: ProviderConfig[]): Record<string, RouteConfig> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${at}: must be a mapping of model id to route`);
  const routes: Record<string, RouteConfig> = {};
  for (const [id, raw] of Object.entries(value as Record<string, unknown>)) {
    const where = `${at}.${id}`;
    const serving = providers.filter((p) => p.models.some((m) => m.id === id)).map((p) => p.name);
    if (serving.length === 0) throw new ConfigError(`${where}: no provider lists the model "${id}"`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`${where}: must be a mapping`);
    const r = raw as Record<string, unknown>;
    for (const field of Object.keys(r)) {
      if (!['strategy', 'weights', 'attempts'].includes(field)) throw new ConfigError(`${where}: unknown field "${field}"`);
    }
    const strategy = r.strategy ?? 'fallback';
    if (strategy !== 'fallback' && strategy !== 'weighted') throw new ConfigError(`${where}: "strategy" must be fallback or weighted, got ${JSON.stringify(strategy)}`);
    let weights: Record<string, number> | null = null;
    if (strategy === 'fallback' && r.weights !== undefined) throw new ConfigError(`${where}: "weights" applies to a weighted route only`);
    if (strategy === 'weighted') {
      if (typeof r.weights !== 'object' || r.weights === null || Array.isArray(r.weights)) throw new ConfigError(`${where}: "weights" (provider name → number) is required for a weighted route`);
      weights = {};
      for (const [name, weight] of Object.entries(r.weights as Record<string, unknown>)) {
        if (!serving.includes(name)) throw new ConfigError(`${where}: "weights" names "${name}", which does not serve "${id}" (served by ${serving.join(', ')})`);
        if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) throw new ConfigError(`${where}: weights.${name} must be a number, 0 or more`);
        weights[name] = weight;
      }
      if (Object.values(weights).every((w) => w === 0)) throw new ConfigError(`${where}: "weights" must give some provider a weight above 0`);
    }
    const attempts = r.attempts === undefined || r.attempts === null ? null : positiveInt(r.attempts, 1, `${where}: "attempts"`);
    routes[id] = { strategy, weights, attempts };
  }
  return routes;
}

function parseCooldown(value: unknown, at: string): CooldownConfig {
  if (value === undefined || value === null) return DEFAULT_COOLDOWN;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${at}: must be a mapping`);
  const c = value as Record<string, unknown>;
  const cooldown = {
    failures: positiveInt(c.failures, DEFAULT_COOLDOWN.failures, `${at}: "failures"`),
    base_ms: positiveInt(c.base_ms, DEFAULT_COOLDOWN.base_ms, `${at}: "base_ms"`),
    max_ms: positiveInt(c.max_ms, DEFAULT_COOLDOWN.max_ms, `${at}: "max_ms"`),
  };
  if (cooldown.max_ms < cooldown.base_ms) throw new ConfigError(`${at}: "max_ms" must be at least "base_ms"`);
  return cooldown;
}

function parseProvider(entry: unknown, at: string, env: Env, knownTypes: readonly ProviderTypeInfo[]): ProviderConfig {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${at}: must be a mapping`);
  const e = entry as Record<string, unknown>;
  const name = e.name;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new ConfigError(`${at}: "name" must be 1-64 letters, digits, '.', '_' or '-'`);
  }
  const where = `${at} (${name})`;
  const type = e.type;
  const info = knownTypes.find((t) => t.type === type);
  if (typeof type !== 'string' || info === undefined) {
    throw new ConfigError(`${where}: "type" must be one of ${knownTypes.map((t) => t.type).join(', ')}, got ${JSON.stringify(type ?? null)}`);
  }

  const settings = parseSettings(e, where, type, info, knownTypes, env);
  const preset = parsePreset(e.preset, where, type, info);

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
  } else if (preset !== null) {
    base_url = preset.base_url;
  } else if (info.usesBaseUrl && info.defaultBaseUrlFor !== undefined && settings !== null) {
    base_url = info.defaultBaseUrlFor(settings).replace(/\/+$/, '');
  } else if (info.usesBaseUrl) {
    if (info.defaultBaseUrl === null) throw new ConfigError(`${where}: "base_url" is required for type ${type}`);
    base_url = info.defaultBaseUrl;
  }

  let api_key: string | null = null;
  if (e.api_key !== undefined && e.api_key !== null) {
    if (typeof e.api_key !== 'string') throw new ConfigError(`${where}: "api_key" must be a string`);
    api_key = expandVars(e.api_key, `${where}: "api_key"`, env) || null;
  }

  const models = e.models;
  if (!Array.isArray(models) || models.length === 0) throw new ConfigError(`${where}: "models" must be a non-empty list`);
  const entries = models.map((m, j) => parseModel(m, `${where}: models[${j}]`));
  const seen = new Set<string>();
  for (const m of entries) {
    if (seen.has(m.id)) throw new ConfigError(`${where}: model "${m.id}" is listed twice`);
    seen.add(m.id);
  }

  const given = e.options ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new ConfigError(`${where}: "options" must be a mapping`);
  // A preset's options are defaults: what the entry sets wins.
  const options = preset === null ? given : { ...preset.options, ...(given as Record<string, unknown>) };

  return {
    name,
    type,
    base_url,
    api_key,
    models: entries,
    connect_timeout_ms: positiveInt(e.connect_timeout_ms, DEFAULTS.connect_timeout_ms, `${where}: "connect_timeout_ms"`),
    timeout_ms: positiveInt(e.timeout_ms, DEFAULTS.timeout_ms, `${where}: "timeout_ms"`),
    idle_timeout_ms: positiveInt(e.idle_timeout_ms, DEFAULTS.idle_timeout_ms, `${where}: "idle_timeout_ms"`),
    // Unset: no connection cap and no waiting bound, so a worker holds as many streams as its
    // open-files limit allows (a queued stream would wait for a whole other stream to end).
    max_connections: e.max_connections == null ? DEFAULTS.max_connections : positiveInt(e.max_connections, 1, `${where}: "max_connections"`),
    max_queued: e.max_queued == null ? DEFAULTS.max_queued : nonNegativeInt(e.max_queued, 0, `${where}: "max_queued"`),
    options: options as Record<string, unknown>,
    ...(settings === null ? {} : { settings }),
    ...(preset === null ? {} : { preset: e.preset as string }),
  };
}

/**
 * The type's own fields (strings, `${VAR}` expanded), null for a type that declares none. A field
 * another type declares is refused here, so that `region:` on an openai entry is a start-up error
 * rather than ignored.
 */
function parseSettings(e: Record<string, unknown>, where: string, type: string, info: ProviderTypeInfo, knownTypes: readonly ProviderTypeInfo[], env: Env): Record<string, string> | null {
  const own = info.fields ?? {};
  for (const other of knownTypes) {
    if (other === info || other.fields === undefined) continue;
    for (const field of Object.keys(other.fields)) {
      if (e[field] !== undefined && !(field in own)) throw new ConfigError(`${where}: "${field}" applies to type ${other.type}, not ${type}`);
    }
  }
  if (info.fields === undefined) return null;
  const settings: Record<string, string> = {};
  for (const [field, need] of Object.entries(own)) {
    const value = e[field];
    if (value === undefined || value === null || value === '') {
      if (need === 'required') throw new ConfigError(`${where}: "${field}" is required for type ${type}`);
      continue;
    }
    if (typeof value !== 'string') throw new ConfigError(`${where}: "${field}" must be a string`);
    const expanded = expandVars(value, `${where}: "${field}"`, env);
    if (expanded === '' && need === 'required') throw new ConfigError(`${where}: "${field}" is required for type ${type} (it expanded to nothing)`);
    if (expanded !== '') settings[field] = expanded;
  }
  return settings;
}

function parsePreset(value: unknown, where: string, type: string, info: ProviderTypeInfo): ProviderPreset | null {
  if (value === undefined || value === null) return null;
  const names = Object.keys(info.presets ?? {});
  if (names.length === 0) throw new ConfigError(`${where}: type ${type} has no presets`);
  if (typeof value !== 'string' || info.presets?.[value] === undefined) throw new ConfigError(`${where}: "preset" must be one of ${names.join(', ')}, got ${JSON.stringify(value)}`);
  return info.presets[value];
}

/** A model: its id as a string, or `{ id, upstream?, price? }`. */
function parseModel(value: unknown, at: string): ModelEntry {
  if (typeof value === 'string') {
    if (value.length === 0 || value.length > 256) throw new ConfigError(`${at} must be a non-empty string`);
    checkWildcard(value, value, `${at} (${value})`);
    return plainModel(value);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${at} must be a model id or { id, upstream, price }`);
  const m = value as Record<string, unknown>;
  for (const field of Object.keys(m)) {
    if (!['id', 'upstream', 'price', 'max_output_tokens'].includes(field)) throw new ConfigError(`${at}: unknown field "${field}"`);
  }
  if (typeof m.id !== 'string' || m.id.length === 0 || m.id.length > 256) throw new ConfigError(`${at}: "id" must be a non-empty string`);
  const upstream = m.upstream ?? m.id;
  if (typeof upstream !== 'string' || upstream.length === 0 || upstream.length > 256) throw new ConfigError(`${at} (${m.id}): "upstream" must be a non-empty string`);
  checkWildcard(m.id, upstream, `${at} (${m.id})`);
  const entry: ModelEntry = { id: m.id, upstream, price: parsePrice(m.price, `${at} (${m.id}): "price"`) };
  if (m.max_output_tokens !== undefined) entry.max_output_tokens = positiveInt(m.max_output_tokens, DEFAULT_MAX_OUTPUT_TOKENS, `${at} (${m.id}): "max_output_tokens"`);
  return entry;
}

/**
 * A model id ending in `*` (`claude-*`) serves every id with that prefix, sent upstream as the
 * client asked for it, or with the prefix of `upstream` (`upstream: "anthropic.claude-*"`) in place
 * of the id's. A `*` anywhere else is refused: it would read as a pattern it is not.
 */
function checkWildcard(id: string, upstream: string, at: string): void {
  const star = id.indexOf('*');
  if (star >= 0 && star !== id.length - 1) throw new ConfigError(`${at}: "*" may only end a model id (a prefix match such as claude-*)`);
  if (id.endsWith('*')) {
    if (upstream.indexOf('*') !== upstream.length - 1) throw new ConfigError(`${at}: the "upstream" of a wildcard id must end in "*" too (the rest of the asked id goes there)`);
  } else if (upstream.includes('*')) {
    throw new ConfigError(`${at}: "upstream" may end in "*" only for an id that does`);
  }
}

function parsePrice(value: unknown, at: string): ModelPrice | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${at} must be { input, output, cached_input, cache_write }`);
  const p = value as Record<string, unknown>;
  const dollars = (field: string, fallback?: number): number => {
    const v = p[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ConfigError(`${at}.${field} must be a number of US dollars per million tokens, 0 or more`);
    return v;
  };
  for (const field of Object.keys(p)) {
    if (!['input', 'output', 'cached_input', 'cache_write', 'batch'].includes(field)) throw new ConfigError(`${at}: unknown field "${field}"`);
  }
  const input = dollars('input');
  const price: ModelPrice = { input, output: dollars('output'), cached_input: dollars('cached_input', input), cache_write: dollars('cache_write', input) };
  if (p.batch !== undefined && p.batch !== null) price.batch = parseBatchPrice(p.batch, `${at}.batch`);
  return price;
}

function parseBatchPrice(value: unknown, at: string): { input: number; output: number } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${at} must be { input, output }`);
  const b = value as Record<string, unknown>;
  for (const field of Object.keys(b)) {
    if (field !== 'input' && field !== 'output') throw new ConfigError(`${at}: unknown field "${field}"`);
  }
  const dollars = (field: 'input' | 'output'): number => {
    const v = b[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ConfigError(`${at}.${field} must be a number of US dollars per million tokens, 0 or more`);
    return v;
  };
  return { input: dollars('input'), output: dollars('output') };
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
