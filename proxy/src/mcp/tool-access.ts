import type { McpServerAllowance, McpSetting } from '@gateway/shared';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * The project's MCP setting asked about one server or tool. Plain lookups on the policy the
 * proxy already holds: no allocation for a server allowed every tool.
 */
export function serverAllowance(setting: McpSetting | null | undefined, server: string): McpServerAllowance | null {
  if (setting === null || setting === undefined) return null;
  return Object.hasOwn(setting.servers, server) ? (setting.servers[server] ?? null) : null;
}

export function toolAllowed(allowance: McpServerAllowance, tool: string): boolean {
  return allowance.tools === '*' || allowance.tools.includes(tool);
}

/** A tools/list result keeping the allowed tools only (the rest of the result as it came). */
export function filterToolsResult(result: Record<string, unknown>, allowance: McpServerAllowance): Record<string, unknown> {
  if (allowance.tools === '*' || !Array.isArray(result.tools)) return result;
  const allowed = allowance.tools;
  return { ...result, tools: (result.tools as Tool[]).filter((tool) => typeof tool?.name === 'string' && allowed.includes(tool.name)) };
}
