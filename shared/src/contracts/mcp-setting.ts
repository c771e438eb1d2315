import { ContractError } from './version.js';

/**
 * A project's MCP setting (DESIGN §7 "MCP gateway"): which of the gateway's MCP servers its keys
 * may use, and per server every tool (`"*"`) or the listed ones. Stored with the project, projected
 * in its policy; a project without one may use no MCP server at all.
 */
export interface McpServerAllowance {
  tools: '*' | string[];
  /** Prompts by name; omitted: none (a server's prompts and resources can carry data, so they are opted into). */
  prompts?: '*' | string[];
  /** Resources by URI; an entry ending in `*` allows every URI that starts with the rest. Omitted: none. */
  resources?: '*' | string[];
}

export interface McpSetting {
  servers: Record<string, McpServerAllowance>;
}

/** Most servers and tools one setting may name (checked by the API, trusted by the proxy). */
export const MAX_MCP_SERVERS = 100;
export const MAX_MCP_TOOLS = 1000;

/** The setting as the proxy reads it from a policy; anything malformed is a contract error. */
export function decodeMcpSetting(name: string, value: unknown): McpSetting | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ContractError(name, 'mcp must be an object or null');
  const servers = (value as { servers?: unknown }).servers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new ContractError(name, 'mcp.servers must be an object');
  const out: Record<string, McpServerAllowance> = {};
  for (const [server, allowance] of Object.entries(servers as Record<string, unknown>)) {
    const fields = allowance as { tools?: unknown; prompts?: unknown; resources?: unknown } | null;
    const tools = listOrAll(name, `mcp.servers.${server}.tools`, fields?.tools);
    if (tools === undefined) throw new ContractError(name, `mcp.servers.${server}.tools must be "*" or a list of names`);
    const entry: McpServerAllowance = { tools };
    const prompts = listOrAll(name, `mcp.servers.${server}.prompts`, fields?.prompts);
    if (prompts !== undefined) entry.prompts = prompts;
    const resources = listOrAll(name, `mcp.servers.${server}.resources`, fields?.resources);
    if (resources !== undefined) entry.resources = resources;
    out[server] = entry;
  }
  return { servers: out };
}

function listOrAll(name: string, field: string, value: unknown): '*' | string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === '*') return '*';
  if (Array.isArray(value) && value.every((t) => typeof t === 'string')) return value as string[];
  throw new ContractError(name, `${field} must be "*" or a list of names`);
}
