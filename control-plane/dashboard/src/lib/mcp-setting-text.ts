import type { McpSetting } from '../api/types.js';

/**
 * The project's MCP setting as the settings form edits it: one line per server, `docs` or
 * `docs: *` for every tool, `tickets: search, get_ticket` for some, then optionally
 * `; prompts: …` and `; resources: …` (which are none unless named). Empty: no MCP (null).
 */
type Allowance = McpSetting['servers'][string];
const EXTRAS = ['prompts', 'resources'] as const;

export function mcpText(setting: McpSetting | null | undefined): string {
  if (setting === null || setting === undefined) return '';
  return Object.entries(setting.servers)
    .map(([name, allowance]) => {
      let line = `${name}: ${list(allowance.tools)}`;
      for (const extra of EXTRAS) {
        const value = allowance[extra];
        if (value !== undefined) line += `; ${extra}: ${list(value)}`;
      }
      return line;
    })
    .join('\n');
}

function list(value: '*' | string[]): string {
  return value === '*' ? '*' : value.join(', ');
}

const SERVER = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,62}$/;

export function parseMcpText(text: string): { ok: true; value: McpSetting | null } | { ok: false; problem: string } {
  const servers: McpSetting['servers'] = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const [head = '', ...rest] = line.split(';');
    const colon = head.indexOf(':');
    const name = (colon < 0 ? head : head.slice(0, colon)).trim();
    if (!SERVER.test(name)) return { ok: false, problem: `“${name}” is not a server name (letters, digits, - and _).` };
    if (Object.hasOwn(servers, name)) return { ok: false, problem: `“${name}” is listed twice.` };
    const allowance: Allowance = { tools: names(colon < 0 ? '*' : head.slice(colon + 1).trim() || '*') };
    for (const part of rest) {
      const at = part.indexOf(':');
      const field = (at < 0 ? part : part.slice(0, at)).trim();
      if (field === '') continue;
      if (!(EXTRAS as readonly string[]).includes(field)) return { ok: false, problem: `“${field}” on the line of ${name}: write “; prompts: …” or “; resources: …”.` };
      const value = names(at < 0 ? '*' : part.slice(at + 1).trim() || '*');
      allowance[field as (typeof EXTRAS)[number]] = value;
    }
    servers[name] = allowance;
  }
  return { ok: true, value: Object.keys(servers).length === 0 ? null : { servers } };
}

function names(list: string): '*' | string[] {
  return list === '*' ? '*' : [...new Set(list.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
}

export function sameMcp(a: McpSetting | null, b: McpSetting | null | undefined): boolean {
  return mcpText(a) === mcpText(b ?? null);
}
