import type { AuditEvent, AuditOutcome, GuardrailDecision, KeyRecord, UsageRecord } from '@gateway/shared';

/**
 * The records of an MCP request (DESIGN §7): one audit event for every request on `/mcp`
 * (endpoint `mcp`, with the server, the tool of a tools/call and the JSON-RPC method), and one usage
 * record for a tools/call that reached its server (tokens 0, `cost_usd` its `price_per_call`; model
 * and provider are the tool and the server, so the usage summaries group tool calls too).
 */
export interface McpFacts {
  readonly id: string;
  readonly info: { readonly requestId: string; readonly clientIp: string; readonly userAgent: string };
  /** The server the request was for; `*` for the aggregate endpoint when no single server served it. */
  readonly server: string;
  readonly tool: string | null;
  readonly method: string;
  /** The request was sent to the server. */
  readonly reached: boolean;
}

export type ToolAnswer = 'result' | 'error' | null;

const MAX_USER_AGENT = 512;

export function mcpAuditEvent(req: McpFacts, key: KeyRecord | null, outcome: AuditOutcome, status: number, errorCode: string | null, timestamp: number, latencyMs: number, guardrails: GuardrailDecision[] | null = null): AuditEvent {
  const { info } = req;
  return {
    id: req.id,
    request_id: info.requestId,
    timestamp,
    type: 'gateway.request',
    outcome,
    status,
    error_code: errorCode,
    project_id: key?.project_id ?? null,
    key_id: key?.id ?? null,
    actor: null,
    model: req.tool,
    provider: req.reached ? req.server : null,
    client_ip: info.clientIp || null,
    user_agent: info.userAgent ? info.userAgent.slice(0, MAX_USER_AGENT) : null,
    latency_ms: latencyMs,
    endpoint: 'mcp',
    attempts: req.reached ? 1 : 0,
    providers: req.reached ? [req.server] : [],
    mcp: { server: req.server, tool: req.tool, method: req.method },
    ...(guardrails === null ? {} : { guardrails }),
  };
}

export function mcpUsageRecord(req: McpFacts, key: KeyRecord, tool: string, answer: ToolAnswer, stream: boolean, pricePerCall: number | null, timestamp: number, latencyMs: number): UsageRecord {
  return {
    id: req.id,
    request_id: req.info.requestId,
    project_id: key.project_id,
    key_id: key.id,
    timestamp,
    model: tool,
    provider: req.server,
    tokens: { input: 0, output: 0, total: 0, cached: 0 },
    cost_usd: pricePerCall,
    latency_ms: latencyMs,
    // A tool that answered, failed (a JSON-RPC error or a result flagged isError), or never answered.
    finish_reason: answer === 'result' ? 'stop' : answer === 'error' ? 'error' : 'cancelled',
    provider_finish_reason: null,
    stream,
    endpoint: 'mcp',
  };
}
