import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { WireRequest } from '../../test-support/wire-mock.js';

/**
 * Anthropic's Messages API with extended thinking, as it answers and as it refuses (the Messages
 * reference and the extended-thinking guide): a `thinking` request gets a signed thinking block
 * before its text or tool call, and is refused 400 where Anthropic refuses it — a budget under
 * 1,024 tokens or not under `max_tokens`, a temperature other than 1, a top_p under 0.95, a tool
 * choice that forces a tool, and a tool loop whose last assistant turn does not start with the
 * thinking block Anthropic signed for it, unchanged. For mocks that play Anthropic behind a
 * translation.
 */
export type AnthropicTurn = { text: string } | { call: { id: string; name: string; input: Record<string, unknown> } };

const SIGNING_KEY = 'mock-anthropic-thinking-signing-key';

/** The signature the mock gives a thinking text (Anthropic's is opaque; the mock's is checkable). */
export function signThinking(thinking: string): string {
  return createHmac('sha256', SIGNING_KEY).update(thinking).digest('base64');
}

type Block = { type?: string; thinking?: string; signature?: string; data?: string };
type Message = { role?: string; content?: unknown };

const error = (message: string) => ({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_011thinking' });

/** Anthropic's refusal of the body, or null. */
export function thinkingRefusal(req: WireRequest): string | null {
  const body = req.body;
  if (req.headers['anthropic-version'] === undefined) return 'anthropic-version: header is required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (thinking === undefined || thinking.type !== 'enabled') return null;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  if (typeof body.temperature === 'number' && body.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled';
  if (typeof body.top_p === 'number' && body.top_p < 0.95) return '`top_p` must be greater than or equal to 0.95 when thinking is enabled';
  const choice = (body.tool_choice as { type?: string } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Message;
    if (message.role !== 'assistant') continue;
    const blocks = Array.isArray(message.content) ? (message.content as Block[]) : [];
    if (!blocks.some((b) => b.type === 'tool_use')) break;
    const first = blocks[0];
    if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
    }
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j] as Block;
      if (block.type === 'thinking' && (typeof block.thinking !== 'string' || block.signature !== signThinking(block.thinking))) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
    break;
  }
  return null;
}

/** The answer: a signed thinking block first when thinking was asked for, then the turn; whole or streamed. */
export function answerAnthropic(req: WireRequest, res: ServerResponse, turn: AnthropicTurn, thought: string, usage = { input_tokens: 300, output_tokens: 12 }): void {
  const refused = thinkingRefusal(req);
  if (refused !== null) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify(error(refused)));
    return;
  }
  const model = String(req.body.model ?? '');
  const thinking = (req.body.thinking as { type?: string } | undefined)?.type === 'enabled';
  const signature = signThinking(thought);
  const content: Record<string, unknown>[] = thinking ? [{ type: 'thinking', thinking: thought, signature }] : [];
  content.push('text' in turn ? { type: 'text', text: turn.text } : { type: 'tool_use', id: turn.call.id, name: turn.call.name, input: turn.call.input });
  const stopReason = 'text' in turn ? 'end_turn' : 'tool_use';
  const message = { id: 'msg_01thinking', type: 'message', role: 'assistant', model, stop_sequence: null };
  if (req.body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content, stop_reason: stopReason, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
  event({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } });
  let index = 0;
  if (thinking) {
    event({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    const half = Math.floor(thought.length / 2);
    event({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: thought.slice(0, half) } });
    event({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: thought.slice(half) } });
    event({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } });
    event({ type: 'content_block_stop', index });
    index++;
  }
  if ('text' in turn) {
    event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: turn.text } });
  } else {
    event({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: turn.call.id, name: turn.call.name, input: {} } });
    event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.call.input) } });
  }
  event({ type: 'content_block_stop', index });
  event({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  event({ type: 'message_stop' });
  res.end();
}
