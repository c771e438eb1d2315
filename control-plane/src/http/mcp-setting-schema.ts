import { MAX_MCP_SERVERS, MAX_MCP_TOOLS } from '@gateway/shared';

/**
 * The project's `mcp` field as the API takes it (DESIGN §7 "MCP gateway"): the servers of the
 * providers file's `mcp_servers` its keys may use, each with every tool (`"*"`) or a list. The
 * whole setting is replaced on PATCH; null removes it (no MCP at all). Server names follow the
 * providers file's rule; a name no proxy serves is kept and simply matches nothing. Prompts and
 * resources are opted into like tools, and none are allowed unless listed.
 */
export const mcpSettingSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['servers'],
  description: 'MCP servers (and their tools) the project\'s keys may use through `/mcp`; null (the default) means none. Replaced as a whole.',
  properties: {
    servers: {
      type: 'object',
      maxProperties: MAX_MCP_SERVERS,
      propertyNames: { pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,62}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['tools'],
        properties: {
          tools: {
            description: '"*" for every tool of the server, or the names of the tools allowed.',
            anyOf: allOrList(256),
          },
          prompts: {
            description: '"*" for every prompt of the server, or the names of the prompts allowed; omitted: none.',
            anyOf: allOrList(256),
          },
          resources: {
            description: '"*" for every resource of the server, or the URIs allowed (an entry ending in `*` allows every URI starting with the rest); omitted: none.',
            anyOf: allOrList(2048),
          },
        },
      },
    },
  },
} as const;

function allOrList(maxLength: number) {
  return [
    { type: 'string', enum: ['*'] },
    { type: 'array', maxItems: MAX_MCP_TOOLS, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength } },
  ] as const;
}
