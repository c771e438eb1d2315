import { ContractError } from './version.js';

/**
 * A project's MCP setting (DESIGN §7 "MCP gateway"): which of the gateway's MCP servers its keys
 * may use, and per server every tool (`"*"`) or the listed ones. Stored with the project, projected
 * in its policy; a project without one may use no MCP server at all.
 */
export interface McpServerAllowance {
  tools: '*' | string[];
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
    const tools = (allowance as { tools?: unknown } | null)?.tools;
    if (tools === '*') out[server] = { tools: '*' };
    else if (Array.isArray(tools) && tools.every((t) => typeof t === 'string')) out[server] = { tools: tools as string[] };
    else throw new ContractError(name, `mcp.servers.${server}.tools must be "*" or a list of names`);
  }
  return { servers: out };
}
