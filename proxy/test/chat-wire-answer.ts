import type { ServerResponse } from 'node:http';
import type { WireRequest } from '../../test-support/wire-mock.js';

/**
 * An OpenAI Chat Completions answer as the provider sends it, whole or streamed (chunks, the usage
 * chunk when asked for, `[DONE]`): a text, or one function call. For mocks that play a chat
 * provider behind a translation.
 */
export type ChatTurn = { text: string } | { call: { id: string; name: string; arguments: string } };

export function answerChat(req: WireRequest, res: ServerResponse, turn: ChatTurn, usage = { prompt_tokens: 120, completion_tokens: 15 }): void {
  const model = req.body.model;
  const totals = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  const finish = 'call' in turn ? 'tool_calls' : 'stop';
  const call = 'call' in turn ? { id: turn.call.id, type: 'function', function: { name: turn.call.name, arguments: turn.call.arguments } } : null;
  if (req.body.stream !== true) {
    const message = call === null ? { role: 'assistant', content: (turn as { text: string }).text } : { role: 'assistant', content: null, tool_calls: [call] };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message, finish_reason: finish }], usage: totals }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model, choices, ...extra })}\n\n`);
  if (call === null) {
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    chunk([{ index: 0, delta: { content: (turn as { text: string }).text }, finish_reason: null }]);
  } else {
    chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...call, function: { name: call.function.name, arguments: '' } }] }, finish_reason: null }]);
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, finish_reason: null }]);
  }
  chunk([{ index: 0, delta: {}, finish_reason: finish }]);
  const options = req.body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage === true) chunk([], { usage: totals });
  res.end('data: [DONE]\n\n');
}
