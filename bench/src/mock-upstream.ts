import { loadUws, type HttpResponse, type us_listen_socket } from '@gateway/proxy/uws';
import { addAnthropicRoute } from './mock-anthropic.js';
import { mockRoute, pieces, sendFrames, type MockState } from './mock-frames.js';

/**
 * A model provider stand-in speaking OpenAI's Chat Completions wire format, on uWebSockets.js so
 * it is never the bottleneck of a benchmark. Tests steer it through an unknown body field the
 * gateway passes through untouched:
 *   "mock": { "status": 500, "delay_ms": 50, "chunks": 10, "gap_ms": 5, "tool_call": true,
 *             "finish_reason": "length", "hang": true, "hang_after_chunks": 2, "content": "…",
 *             "error_param": "messages", "retry_after": "7", "error_after_chunks": 3 }
 * (`error_after_chunks`: a stream sends that many chunks, then an OpenAI error event and [DONE].)
 * GET /__stats reports what it saw (requests, aborted connections, last request's headers/body).
 */
export interface MockBehaviour {
  status?: number;
  error_message?: string;
  error_param?: string;
  /** Retry-After header sent with an error status. */
  retry_after?: string;
  /** A stream sends this many chunks, then an error event (as OpenAI does mid-stream) and [DONE]. */
  error_after_chunks?: number;
  delay_ms?: number;
  chunks?: number;
  gap_ms?: number;
  tool_call?: boolean;
  finish_reason?: string;
  hang?: boolean;
  hang_after_chunks?: number;
  content?: string;
}

export interface MockUpstreamStats {
  requests: number;
  streams: number;
  aborted: number;
  completed: number;
  lastHeaders: Record<string, string>;
  lastBody: unknown;
}

export interface MockUpstream {
  port: number;
  baseUrl: string;
  stats: MockUpstreamStats;
  close(): void;
}

export interface MockUpstreamOptions {
  port?: number;
  host?: string;
  /** Defaults for requests that carry no `mock` field (benchmarks set chunks and gap here). */
  defaults?: MockBehaviour;
}

const DEFAULT_CONTENT = 'Hello from the mock upstream. This reply is made of several small pieces.';

export function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const uws = loadUws();
  const stats: MockUpstreamStats = { requests: 0, streams: 0, aborted: 0, completed: 0, lastHeaders: {}, lastBody: null };
  const defaults = options.defaults ?? {};
  const app = uws.App();

  mockRoute(app, '/v1/chat/completions', stats, defaults, (res, body, behaviour, state) => {
    if (behaviour.status && behaviour.status !== 200) return sendError(res, behaviour);
    if (body.stream === true) {
      stats.streams++;
      return sendStream(res, body, behaviour, state, stats);
    }
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(JSON.stringify(completion(body, behaviour)));
    });
    stats.completed++;
  });

  addAnthropicRoute(app, stats, defaults);

  app.get('/__stats', (res) => {
    res.writeHeader('content-type', 'application/json').end(JSON.stringify(stats));
  });
  app.post('/__reset', (res) => {
    Object.assign(stats, { requests: 0, streams: 0, aborted: 0, completed: 0, lastHeaders: {}, lastBody: null });
    res.end('{}');
  });
  app.get('/v1/models', (res) => {
    res.writeHeader('content-type', 'application/json').end(JSON.stringify({ object: 'list', data: [] }));
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host ?? '127.0.0.1', options.port ?? 0, (socket: us_listen_socket | false) => {
      if (!socket) return reject(new Error(`mock upstream could not listen on port ${options.port ?? 0}`));
      const port = uws.us_socket_local_port(socket);
      resolve({
        port,
        baseUrl: `http://127.0.0.1:${port}/v1`,
        stats,
        close: () => uws.us_listen_socket_close(socket),
      });
    });
  });
}


function promptTokens(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let chars = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown }).content;
    chars += typeof content === 'string' ? content.length : JSON.stringify(content ?? '').length;
  }
  return Math.max(1, Math.ceil(chars / 4));
}


function wantsTool(body: Record<string, unknown>, b: MockBehaviour): { name: string } | null {
  if (b.tool_call === false) return null;
  const tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0) return null;
  if (b.tool_call !== true && body.tool_choice === 'none') return null;
  const name = (tools[0] as { function?: { name?: string } }).function?.name ?? 'tool';
  return { name };
}

function completion(body: Record<string, unknown>, b: MockBehaviour) {
  const content = b.content ?? DEFAULT_CONTENT;
  const input = promptTokens(body);
  const tool = wantsTool(body, b);
  const output = tool ? 12 : Math.max(1, Math.ceil(content.length / 4));
  const message = tool
    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_mock_1', type: 'function', function: { name: tool.name, arguments: '{"city":"Paris"}' } }] }
    : { role: 'assistant', content, refusal: null };
  return {
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model ?? 'mock'),
    choices: [{ index: 0, message, logprobs: null, finish_reason: b.finish_reason ?? (tool ? 'tool_calls' : 'stop') }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  };
}

function sendError(res: HttpResponse, b: MockBehaviour): void {
  const status = b.status ?? 500;
  res.cork(() => {
    res.writeStatus(`${status} Mock Error`).writeHeader('content-type', 'application/json');
    if (b.retry_after !== undefined) res.writeHeader('retry-after', b.retry_after);
    res.end(JSON.stringify({ error: { message: b.error_message ?? `mock failure ${status}`, type: status < 500 ? 'invalid_request_error' : 'server_error', param: b.error_param ?? null, code: null } }));
  });
}

function sendStream(
  res: HttpResponse,
  body: Record<string, unknown>,
  b: MockBehaviour,
  state: MockState,
  stats: MockUpstreamStats,
): void {
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const model = String(body.model ?? 'mock');
  const created = Math.floor(Date.now() / 1000);
  const tool = wantsTool(body, b);
  const content = b.content ?? DEFAULT_CONTENT;
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created, model, system_fingerprint: null };
  const usageField = includeUsage ? { usage: null } : {};
  const events: string[] = [];
  events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: tool ? null : '' }, logprobs: null, finish_reason: null }], ...usageField }));
  let output = 0;
  if (tool) {
    const args = ['{"ci', 'ty":"Pa', 'ris"}'];
    events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_mock_1', type: 'function', function: { name: tool.name, arguments: '' } }] }, logprobs: null, finish_reason: null }], ...usageField }));
    for (const a of args) {
      events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: a } }] }, logprobs: null, finish_reason: null }], ...usageField }));
    }
    output = 12;
  } else {
    for (const piece of pieces(content, b.chunks ?? 8)) {
      events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }], ...usageField }));
      output += Math.max(1, Math.ceil(piece.length / 4));
    }
  }
  events.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: b.finish_reason ?? (tool ? 'tool_calls' : 'stop') }], ...usageField }));
  if (includeUsage) {
    const input = promptTokens(body);
    events.push(JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } }));
  }
  if (b.error_after_chunks !== undefined) {
    events.length = Math.min(events.length, b.error_after_chunks);
    events.push(JSON.stringify({ error: { message: b.error_message ?? 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }));
  }
  const frames = events.map((e) => `data: ${e}\n\n`);
  frames.push('data: [DONE]\n\n');

  sendFrames(res, frames, b, state, stats);
}
