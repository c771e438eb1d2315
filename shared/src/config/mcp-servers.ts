import { ConfigError, type Env } from './env.js';

/**
 * The providers file's `mcp_servers` list: Model Context Protocol servers (Streamable HTTP) the
 * gateway fronts at `/mcp/{name}`. Kept apart from the providers' own parsing: a tool server is
 * not a model provider, and its entry has its own fields.
 */
export interface McpServerConfig {
  /** The path segment (`/mcp/{name}`), the prefix of its tools on `/mcp`, and the usage record's provider. */
  name: string;
  /** The server's Streamable HTTP endpoint. */
  url: string;
  /** Sent to the server on every request instead of the client's key (`${VAR}` already expanded); never logged. */
  headers: Record<string, string>;
  /** US dollars recorded as `cost_usd` per tool call that reached the server; null: no price. */
  price_per_call: number | null;
  /** Time allowed to open a connection to the server. */
  connect_timeout_ms: number;
  /** Time allowed until the server's response headers arrive. */
  timeout_ms: number;
}

/** Names are path segments and tool-name prefixes: no `__` (the `/mcp` separator), no dots. */
const NAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,62}$/;
const FIELDS = ['name', 'url', 'headers', 'price_per_call', 'connect_timeout_ms', 'timeout_ms'];
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the gateway sets itself on every forwarded request. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

export function parseMcpServers(value: unknown, at: string, expand: (value: string, what: string) => string): McpServerConfig[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(`${at}: must be a list of { name, url, headers?, price_per_call? }`);
  const servers = value.map((entry, i) => parseServer(entry, `${at}[${i}]`, expand));
  const names = new Set<string>();
  for (const s of servers) {
    if (names.has(s.name)) throw new ConfigError(`${at}: MCP server name "${s.name}" is used twice`);
    names.add(s.name);
  }
  return servers;
}

function parseServer(entry: unknown, at: string, expand: (value: string, what: string) => string): McpServerConfig {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${at}: must be a mapping`);
  const e = entry as Record<string, unknown>;
  if (typeof e.name !== 'string' || !NAME_RE.test(e.name)) {
    throw new ConfigError(`${at}: "name" must be 1-63 letters, digits, '-' or single '_'`);
  }
  const where = `${at} (${e.name})`;
  for (const field of Object.keys(e)) if (!FIELDS.includes(field)) throw new ConfigError(`${where}: unknown field "${field}"`);
  if (typeof e.url !== 'string') throw new ConfigError(`${where}: "url" is required`);
  const url = expand(e.url, `${where}: "url"`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${where}: "url" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${where}: "url" must be http or https`);
  const headers: Record<string, string> = {};
  if (e.headers !== undefined && e.headers !== null) {
    if (typeof e.headers !== 'object' || Array.isArray(e.headers)) throw new ConfigError(`${where}: "headers" must be a mapping of header name to value`);
    for (const [name, raw] of Object.entries(e.headers as Record<string, unknown>)) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME_RE.test(name) || RESERVED_HEADERS.has(lower)) throw new ConfigError(`${where}: "headers" may not set "${name}"`);
      if (typeof raw !== 'string') throw new ConfigError(`${where}: headers.${name} must be a string`);
      // The value is a secret as often as not: the message names the header, never the value.
      const expanded = expand(raw, `${where}: headers.${name}`);
      if (/[\r\n\0]/.test(expanded)) throw new ConfigError(`${where}: headers.${name} contains a line break`);
      headers[lower] = expanded;
    }
  }
  let price: number | null = null;
  if (e.price_per_call !== undefined && e.price_per_call !== null) {
    if (typeof e.price_per_call !== 'number' || !Number.isFinite(e.price_per_call) || e.price_per_call < 0) {
      throw new ConfigError(`${where}: "price_per_call" must be a number of US dollars, 0 or more`);
    }
    price = e.price_per_call;
  }
  return {
    name: e.name,
    url: parsed.toString(),
    headers,
    price_per_call: price,
    connect_timeout_ms: positive(e.connect_timeout_ms, 5_000, `${where}: "connect_timeout_ms"`),
    timeout_ms: positive(e.timeout_ms, 60_000, `${where}: "timeout_ms"`),
  };
}

function positive(value: unknown, fallback: number, what: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new ConfigError(`${what} must be a positive integer`);
  return value;
}

/** Reads the block from a parsed providers file (env lookups through the file's own `${VAR}` rule). */
export function mcpServersOf(root: Record<string, unknown>, source: string, env: Env, expand: (value: string, what: string, env: Env) => string): McpServerConfig[] {
  return parseMcpServers(root.mcp_servers, `${source}: mcp_servers`, (value, what) => expand(value, what, env));
}
