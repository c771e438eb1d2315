import type { McpSetting } from '../api/types.js';

/**
 * The project's MCP setting as the settings form edits it: one line per server, `docs` or
 * `docs: *` for every tool, `tickets: search, get_ticket` for some. Empty: no MCP (null).
 */
export function mcpText(setting: McpSetting | null | undefined): string {
  if (setting === null || setting === undefined) return '';
  return Object.entries(setting.servers)
    .map(([name, { tools }]) => `${name}: ${tools === '*' ? '*' : tools.join(', ')}`)
    .join('\n');
}

const SERVER = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,62}$/;

export function parseMcpText(text: string): { ok: true; value: McpSetting | null } | { ok: false; problem: string } {
  const servers: McpSetting['servers'] = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = (colon < 0 ? line : line.slice(0, colon)).trim();
    const list = colon < 0 ? '*' : line.slice(colon + 1).trim() || '*';
    if (!SERVER.test(name)) return { ok: false, problem: `“${name}” is not a server name (letters, digits, - and _).` };
    if (Object.hasOwn(servers, name)) return { ok: false, problem: `“${name}” is listed twice.` };
    const tools = list === '*' ? '*' : [...new Set(list.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
    servers[name] = { tools };
  }
  return { ok: true, value: Object.keys(servers).length === 0 ? null : { servers } };
}

export function sameMcp(a: McpSetting | null, b: McpSetting | null | undefined): boolean {
  return mcpText(a) === mcpText(b ?? null);
}
