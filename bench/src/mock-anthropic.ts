import type { HttpResponse, TemplatedApp } from '@gateway/proxy/uws';
import { mockRoute, pieces, sendFrames, type MockState } from './mock-frames.js';
import type { MockBehaviour, MockUpstreamStats } from './mock-upstream.js';

/**
 * The mock provider's Anthropic Messages route, `POST /v1/messages`, so the bench can measure the
 * anthropic adapter against the same process (and the same defaults) as the OpenAI route. It
 * answers Anthropic's wire format: a message object, or the named SSE events of a stream, and
 * Anthropic's error body. The behaviour comes from the mock's defaults (MOCK_CHUNKS, MOCK_GAP_MS):
 * the gateway does not forward the OpenAI body's unknown `mock` field to Anthropic, so a `mock`
 * field here only steers direct calls. Its settings mean what they mean on the OpenAI route.
 *
 * A stream is written in as many timed writes as the OpenAI route writes chunks of content:
 * message_start (with content_block_start and a ping) first, each text delta `gap_ms` apart,
 * then content_block_stop, message_delta and message_stop together, as Anthropic sends them.
 */
const DEFAULT_CONTENT = 'Hello from the mock upstream. This reply is made of several small pieces.';
const TOOL_ARGUMENTS = ['{"ci', 'ty":"Pa', 'ris"}'];

/** OpenAI finish reasons a test may give in `finish_reason`, as Anthropic's stop reasons. */
const STOP_REASON: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};


export function addAnthropicRoute(app: TemplatedApp, stats: MockUpstreamStats, defaults: MockBehaviour): void {
  mockRoute(app, '/v1/messages', stats, defaults, (res, body, behaviour, state) => {
    if (behaviour.status && behaviour.status !== 200) return sendError(res, behaviour);
    if (body.stream === true) {
      stats.streams++;
      return sendStream(res, body, behaviour, state, stats);
    }
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(JSON.stringify(message(body, behaviour)));
    });
    stats.completed++;
  });
}


function inputTokens(body: Record<string, unknown>): number {
  let chars = typeof body.system === 'string' ? body.system.length : JSON.stringify(body.system ?? '').length;
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    const content = (m as { content?: unknown }).content;
    chars += typeof content === 'string' ? content.length : JSON.stringify(content ?? '').length;
  }
  return Math.max(1, Math.ceil(chars / 4));
}


function wantsTool(body: Record<string, unknown>, b: MockBehaviour): { name: string } | null {
  if (b.tool_call === false) return null;
  const tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0) return null;
  if (b.tool_call !== true && (body.tool_choice as { type?: string } | undefined)?.type === 'none') return null;
  return { name: (tools[0] as { name?: string }).name ?? 'tool' };
}

function stopReason(b: MockBehaviour, tool: boolean): string {
  if (b.finish_reason !== undefined) return STOP_REASON[b.finish_reason] ?? b.finish_reason;
  return tool ? 'tool_use' : 'end_turn';
}

function message(body: Record<string, unknown>, b: MockBehaviour) {
  const text = b.content ?? DEFAULT_CONTENT;
  const tool = wantsTool(body, b);
  const content = tool ? [{ type: 'tool_use', id: 'toolu_mock_1', name: tool.name, input: { city: 'Paris' } }] : [{ type: 'text', text }];
  return {
    id: 'msg_mock',
    type: 'message',
    role: 'assistant',
    model: String(body.model ?? 'mock'),
    content,
    stop_reason: stopReason(b, tool !== null),
    stop_sequence: null,
    usage: { input_tokens: inputTokens(body), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: tool ? 12 : Math.max(1, Math.ceil(text.length / 4)) },
  };
}

function sendError(res: HttpResponse, b: MockBehaviour): void {
  const status = b.status ?? 500;
  res.cork(() => {
    res.writeStatus(`${status} Mock Error`).writeHeader('content-type', 'application/json');
    if (b.retry_after !== undefined) res.writeHeader('retry-after', b.retry_after);
    res.end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message: b.error_message ?? `mock failure ${status}` }, request_id: 'req_mock' }));
  });
}

const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

function sendStream(res: HttpResponse, body: Record<string, unknown>, b: MockBehaviour, state: MockState, stats: MockUpstreamStats): void {
  const tool = wantsTool(body, b);
  const input = inputTokens(body);
  const start = { ...message(body, b), content: [], stop_reason: null, usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } };
  // Each entry is one timed write.
  const writes: string[] = [];
  let output = 0;
  if (tool) {
    writes.push(event({ type: 'message_start', message: start }) + event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_mock_1', name: tool.name, input: {} } }) + event({ type: 'ping' }));
    for (const a of TOOL_ARGUMENTS) writes.push(event({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: a } }));
    output = 12;
  } else {
    writes.push(event({ type: 'message_start', message: start }) + event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) + event({ type: 'ping' }));
    for (const piece of pieces(b.content ?? DEFAULT_CONTENT, b.chunks ?? 8)) {
      writes.push(event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }));
      output += Math.max(1, Math.ceil(piece.length / 4));
    }
  }
  writes.push(
    event({ type: 'content_block_stop', index: 0 }) +
      event({ type: 'message_delta', delta: { stop_reason: stopReason(b, tool !== null), stop_sequence: null }, usage: { output_tokens: output } }) +
      event({ type: 'message_stop' }),
  );
  if (b.error_after_chunks !== undefined) {
    writes.length = Math.min(writes.length, b.error_after_chunks);
    writes.push(event({ type: 'error', error: { type: 'overloaded_error', message: b.error_message ?? 'Overloaded' } }));
  }

  sendFrames(res, writes, b, state, stats);
}
