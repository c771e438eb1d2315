import type { ServerResponse } from 'node:http';
import { sendJson, sendSse, startWireMock, type RunningWireMock, type WireRequest } from '../../../test-support/wire-mock.js';
import { SCENARIOS } from '../../src/providers/conformance.case.js';

/**
 * Anthropic's Messages wire format (API reference, version 2023-06-01): the message object, the
 * named SSE events (message_start, content_block_start/delta/stop, ping, message_delta,
 * message_stop, error) and the `{"type":"error","error":{type,message}}` error body. It answers
 * the conformance scenarios by the `model` field, plus some of its own (EXTRA), and refuses what
 * Anthropic refuses that a translation could get wrong: no anthropic-version header, no
 * max_tokens, a temperature above 1, a system or tool role in `messages`, turns that do not
 * alternate.
 */
export const EXTRA = {
  /** 200, then an overloaded_error event where message_start should be. */
  overloadedFirst: 'anth-overloaded-first',
  unauthorized: 'anth-401',
  overloaded: 'anth-529',
  /** thinking block, text, cache write and read counts. */
  thinking: 'anth-thinking',
  refusal: 'anth-refusal',
  pauseTurn: 'anth-pause-turn',
  /** Two calls, the second of a tool without input, after text. */
  twoTools: 'anth-two-tools',
  /** A stream that stops after the text, without message_delta or message_stop. */
  cut: 'anth-cut',
  /** A stream whose message_delta repeats (cumulative usage, the latest wins). */
  twoDeltas: 'anth-two-deltas',
  /** 200 with a body that is not a message (a proxy's HTML page). */
  notJson: 'anth-not-json',
} as const;

const error = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: 'req_011wire' });

function refusal(req: WireRequest): string | null {
  const body = req.body;
  if (req.headers['anthropic-version'] === undefined) return 'anthropic-version: header is required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (typeof body.temperature === 'number' && (body.temperature < 0 || body.temperature > 1)) return 'temperature: range: 0..1';
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
  for (let i = 0; i < messages.length; i++) {
    const role = messages[i]?.role;
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i > 0 && messages[i - 1]?.role === role) return 'messages: roles must alternate between "user" and "assistant"';
  }
  return null;
}

export function startAnthropicWireMock(): Promise<RunningWireMock> {
  return startWireMock((req, res) => {
    const model = String(req.body.model ?? '');
    const refused = refusal(req);
    if (refused !== null) return sendJson(res, 400, error('invalid_request_error', refused));
    switch (model) {
      case SCENARIOS.status400:
        return sendJson(res, 400, error('invalid_request_error', 'bad request from provider'));
      case SCENARIOS.status429:
        return sendJson(res, 429, error('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'), { 'retry-after': '7' });
      case SCENARIOS.status500:
        return sendJson(res, 500, error('api_error', 'Internal server error'));
      case EXTRA.unauthorized:
        return sendJson(res, 401, error('authentication_error', 'invalid x-api-key'));
      case EXTRA.overloaded:
        return sendJson(res, 529, error('overloaded_error', 'Overloaded'));
      case EXTRA.notJson:
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>captive portal</html>');
        return;
      case SCENARIOS.slow:
        setTimeout(() => !res.destroyed && sendJson(res, 200, message(model, [{ type: 'text', text: 'Hello there' }], 'end_turn')), 2_000);
        return;
    }
    if (req.body.stream === true) return stream(res, model);
    switch (model) {
      case SCENARIOS.tools:
        return sendJson(res, 200, message(model, [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'));
      case EXTRA.twoTools:
        return sendJson(res, 200, message(model, [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }, { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} }], 'tool_use'));
      case SCENARIOS.length:
        return sendJson(res, 200, message(model, [{ type: 'text', text: 'Hello' }], 'max_tokens'));
      case EXTRA.thinking:
        return sendJson(res, 200, {
          ...message(model, [{ type: 'thinking', thinking: 'The user greets me.', signature: 'sig' }, { type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }], 'end_turn'),
          usage: { input_tokens: 5, cache_creation_input_tokens: 4, cache_read_input_tokens: 2, output_tokens: 9 },
        });
      case EXTRA.refusal:
        return sendJson(res, 200, message(model, [], 'refusal'));
      case EXTRA.pauseTurn:
        return sendJson(res, 200, message(model, [{ type: 'text', text: 'Searching' }], 'pause_turn'));
      default:
        return sendJson(res, 200, message(model, [{ type: 'text', text: 'Hello there' }], 'end_turn'));
    }
  });
}

const usage = { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 2 };

function message(model: string, content: unknown[], stopReason: string) {
  return { id: 'msg_01wire', type: 'message', role: 'assistant', model: `${model}-20250101`, content, stop_reason: stopReason, stop_sequence: null, usage };
}

const frame = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

function stream(res: ServerResponse, model: string): void {
  if (model === EXTRA.overloadedFirst) return sendSse(res, [frame(error('overloaded_error', 'Overloaded'))]);
  const start = frame({ type: 'message_start', message: { ...message(model, [], 'end_turn'), stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  const text = (index: number, pieces: string[]) => [
    frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    ...pieces.map((t) => frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } })),
    frame({ type: 'content_block_stop', index }),
  ];
  const tool = (index: number, id: string, name: string, pieces: string[]) => [
    frame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
    ...pieces.map((p) => frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } })),
    frame({ type: 'content_block_stop', index }),
  ];
  const end = (stopReason: string, output = 2) => [frame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: output } }), frame({ type: 'message_stop' })];
  const ping = frame({ type: 'ping' });
  switch (model) {
    case SCENARIOS.tools:
      return sendSse(res, [start, ...text(0, ['Let me check.']), ping, ...tool(1, 'toolu_01A', 'get_weather', ['', '{"city":', ' "Paris"}']), ...end('tool_use', 20)]);
    case EXTRA.twoTools:
      return sendSse(res, [start, ...text(0, ['Checking.']), ...tool(1, 'toolu_01A', 'get_weather', ['{"city":"Paris"}']), ...tool(2, 'toolu_01B', 'get_time', []), ...end('tool_use', 30)]);
    case SCENARIOS.length:
      return sendSse(res, [start, ...text(0, ['Hello']), ...end('max_tokens', 1)]);
    case SCENARIOS.streamError:
      return sendSse(res, [start, frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }), frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }), frame(error('overloaded_error', 'Overloaded'))]);
    case SCENARIOS.hang:
      return sendSse(res, [start, frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }), frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } })], { hang: true });
    case EXTRA.thinking:
      return sendSse(res, [
        frame({ type: 'message_start', message: { ...message(model, [], 'end_turn'), stop_reason: null, usage: { input_tokens: 5, cache_creation_input_tokens: 4, cache_read_input_tokens: 2, output_tokens: 1 } } }),
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user greets me.' } }),
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
        frame({ type: 'content_block_stop', index: 0 }),
        ...text(1, ['Hello', ' there']),
        ...end('end_turn', 9),
      ]);
    case EXTRA.cut:
      return sendSse(res, [start, ...text(0, ['Hello'])]);
    case EXTRA.twoDeltas:
      return sendSse(res, [
        start,
        ...text(0, ['Hello']),
        frame({ type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 1 } }),
        frame({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' }, usage: { input_tokens: 8, cache_read_input_tokens: 3, output_tokens: 5 } }),
        frame({ type: 'message_stop' }),
      ]);
    case EXTRA.pauseTurn:
      return sendSse(res, [start, ...text(0, ['Searching']), ...end('pause_turn', 1)]);
    case EXTRA.refusal:
      return sendSse(res, [start, ...end('refusal', 0)]);
    default:
      return sendSse(res, [start, ...text(0, ['Hello', ' there']), ping, ...end('end_turn', 2)]);
  }
}
