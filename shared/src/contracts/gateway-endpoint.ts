/**
 * The inbound gateway APIs a usage record or audit event can come from (DESIGN §3). `/v1/models`
 * is not among them: it calls no provider, and its audit events carry a null endpoint.
 */
export type GatewayEndpoint = 'chat.completions' | 'messages' | 'messages.count_tokens' | 'responses' | 'embeddings' | 'mcp';

/**
 * `mcp`: a request to an MCP server through `/mcp` (its records name the server and tool).
 * `messages.count_tokens`: Anthropic's token count, answered by the gateway (audited, never metered).
 */
export const GATEWAY_ENDPOINTS: readonly GatewayEndpoint[] = ['chat.completions', 'messages', 'messages.count_tokens', 'responses', 'embeddings', 'mcp'];

/** What a record of a v1 batch was: the v1 proxy served chat completions only. */
export const V1_BATCH_ENDPOINT: GatewayEndpoint = 'chat.completions';
