import { GatewayError, type McpServerAllowance, type ProjectPolicy } from '@gateway/shared';
import { RPC } from './jsonrpc.js';
import type { McpRequest } from './mcp-request.js';
import { toolAllowed } from './tool-access.js';

/**
 * A tools/call's admission: the tool on the project's list (else a JSON-RPC error, and the server
 * never sees the call), then the rate limits, which count tool calls as requests (no tokens).
 * The call's `execute_tool` span (tracing on) starts first, so a refusal is traced too. False:
 * refused and answered. A promise only when the rate limits wait on Redis.
 */
export function admitToolCall(req: McpRequest, policy: ProjectPolicy, allowance: McpServerAllowance | null, tool: string, shownName: string): boolean | Promise<boolean> {
  const tracer = req.deps.tracer;
  if (tracer !== null) {
    const { info } = req;
    req.trace = tracer.tool({
      traceparent: info.traceparent,
      tracestate: info.tracestate,
      route: info.server === null ? '/mcp' : '/mcp/{server}',
      requestId: info.requestId,
      projectId: req.projectId,
      keyId: req.keyId,
      server: req.server,
      tool,
      callId: String(req.rpcId),
    });
  }
  if (allowance === null || !toolAllowed(allowance, tool)) {
    req.refuseCall(new GatewayError('TOOL_NOT_ALLOWED', `The tool \`${shownName}\` is not allowed for this project.`, { param: 'params.name' }), RPC.invalidParams);
    return false;
  }
  const rate = req.deps.rateLimiter.check(policy, req.keyId, 0, Date.now());
  if (rate === null) return true;
  return rate instanceof Promise ? rate.then((refused) => rateAnswer(req, refused)) : rateAnswer(req, rate);
}

function rateAnswer(req: McpRequest, refused: GatewayError | null): boolean {
  if (req.finished) return false;
  if (refused !== null) {
    req.fail(refused, refused.code === 'RATE_LIMITED' ? 'policy_blocked' : 'error');
    return false;
  }
  return true;
}
