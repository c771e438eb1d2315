import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeProjectPolicy, NO_RATE_LIMITS } from '@gateway/shared';
import { eventually } from '../../test-support/processes.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../../test-support/otlp-receiver.js';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';
import { startStatelessMcpServer, type TestMcpServer } from './mcp-servers.js';

/**
 * An MCP tools/call is an `execute_tool {tool}` span under the caller's trace, and the MCP server
 * receives the span's context; a refused call's span says so.
 */
let receiver: OtlpReceiver;
let tools: TestMcpServer;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tools = await startStatelessMcpServer();
  h = await startHarness('mcp-tracing', `providers:\n  - { name: mock, type: mock, models: [mock-1] }\nmcp_servers:\n  - { name: tools, url: "${tools.url}" }\n`, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '10',
  });
  key = await projectTestKey(h.redis, h.keys);
  await h.redis.set(
    h.keys.projectPolicy(key.projectId),
    encodeProjectPolicy({ id: key.projectId, quota_tokens: null, quota_period: 'total', rate_limits: NO_RATE_LIMITS, allowed_models: null, max_tokens_cap: null, mcp: { servers: { tools: { tools: ['echo'] } } } }),
  );
});

afterAll(async () => {
  await h?.stop();
  await tools?.close();
  await receiver?.close();
});

function call(name: string, traceparent: string): Promise<Response> {
  return fetch(`${h.url}/mcp/tools`, {
    method: 'POST',
    headers: { 'x-api-key': key.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', traceparent },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: { text: 'traced' } } }),
  });
}

it('traces a tool call as execute_tool, continuing the caller and carried on to the server', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const res = await call('echo', `00-${traceId}-00f067aa0ba902b7-01`);
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('traced');
  let span = receiver.spans().find((s) => s.name === 'execute_tool echo');
  await eventually(async () => (span = receiver.spans().find((s) => s.name === 'execute_tool echo')) !== undefined, 'span exported');
  expect(span).toMatchObject({
    traceId,
    parentSpanId: '00f067aa0ba902b7',
    kind: SPAN_KIND.server,
    attributes: expect.objectContaining({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo', 'gen_ai.tool.call.id': '7', 'gateway.mcp.server': 'tools', 'gateway.outcome': 'success', 'gateway.project.id': key.projectId }),
  });
  expect(tools.requests.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${span!.spanId}-01`);

  const refused = await call('admin_reset', `00-${'a'.repeat(32)}-00f067aa0ba902b7-01`);
  expect(((await refused.json()) as { error: { data: { code: string } } }).error.data.code).toBe('TOOL_NOT_ALLOWED');
  await eventually(async () => receiver.spans().some((s) => s.name === 'execute_tool admin_reset'), 'refusal exported');
  expect(receiver.spans().find((s) => s.name === 'execute_tool admin_reset')?.attributes['gateway.outcome']).toBe('policy_blocked');
});
