import { UsageError } from './cli-errors.js';

/**
 * `--mcp` of `projects create|update`: the project's MCP setting in one word. Servers are separated
 * by `;`, each `name` (every tool), `name=*` or `name=tool,tool`; `none` removes the setting. The
 * setting as JSON (starting with `{`) is taken as it is, for prompts and resources:
 *   --mcp 'docs;tickets=search,get_ticket'
 *   --mcp '{"servers":{"docs":{"tools":"*","prompts":["summary"]}}}'
 */
type List = '*' | string[];
export type McpSettingBody = { servers: Record<string, { tools: List; prompts?: List; resources?: List }> } | null;

export function parseMcpOption(value: string): McpSettingBody {
  const trimmed = value.trim();
  if (trimmed === 'none') return null;
  if (trimmed.startsWith('{')) {
    try {
      // The API checks the shape and names what is wrong.
      return JSON.parse(trimmed) as McpSettingBody;
    } catch {
      throw new UsageError('--mcp: the setting starting with { is not JSON');
    }
  }
  const servers: Record<string, { tools: List }> = {};
  for (const part of trimmed.split(';')) {
    const entry = part.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    const list = eq < 0 ? '*' : entry.slice(eq + 1).trim();
    if (name === '') throw new UsageError(`--mcp: "${entry}" names no server`);
    const tools = list === '*' ? '*' : [...new Set(list.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
    if (tools !== '*' && tools.length === 0) throw new UsageError(`--mcp: give the tools of "${name}" (or * for all)`);
    servers[name] = { tools };
  }
  if (Object.keys(servers).length === 0) throw new UsageError("--mcp: give 'server[=tool,…];…' or none");
  return { servers };
}

/** The setting as the table shows it: `docs=*`, `tickets=search,get_ticket`, `docs=* prompts=summary`. */
export function describeMcp(setting: McpSettingBody | undefined): string[] | null {
  if (setting === null || setting === undefined) return null;
  const list = (l: List) => (l === '*' ? '*' : l.join(','));
  return Object.entries(setting.servers).map(
    ([name, { tools, prompts, resources }]) =>
      `${name}=${list(tools)}${prompts === undefined ? '' : ` prompts=${list(prompts)}`}${resources === undefined ? '' : ` resources=${list(resources)}`}`,
  );
}
