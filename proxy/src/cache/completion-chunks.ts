/**
 * A stored chat.completion as the internal chunks a provider would have streamed (OpenAI
 * chat.completion.chunk JSON): per choice a role chunk, its content, its tool calls, its finish;
 * then the usage chunk when the client asked for it. The endpoint's own stream writer
 * (protocols/) renders them, so a hit streams in Chat, Messages or Responses format exactly as a
 * provider's stream would be.
 */
interface StoredMessage {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
}

interface StoredCompletion {
  id: string;
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: { index: number; message: StoredMessage; finish_reason: string | null }[];
  usage?: unknown;
}

export function completionChunks(completion: StoredCompletion, withUsage: boolean): string[] {
  const head = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model, ...(completion.system_fingerprint === undefined ? {} : { system_fingerprint: completion.system_fingerprint }) };
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null) =>
    // Copies of the head, not spreads: V8 makes a property added after an object spread slow.
    JSON.stringify(Object.assign({}, head, { choices: [{ index, delta, logprobs: null, finish_reason: finish }] }));
  const out: string[] = [];
  for (const choice of completion.choices) {
    const { index, message } = choice;
    out.push(chunk(index, { role: 'assistant', content: '', refusal: null }));
    if (typeof message.content === 'string' && message.content !== '') out.push(chunk(index, { content: message.content }));
    if (typeof message.refusal === 'string' && message.refusal !== '') out.push(chunk(index, { refusal: message.refusal }));
    (message.tool_calls ?? []).forEach((call, i) => {
      out.push(chunk(index, { tool_calls: [{ index: i, id: call.id, type: call.type, function: { name: call.function.name, arguments: call.function.arguments } }] }));
    });
    out.push(chunk(index, {}, choice.finish_reason ?? 'stop'));
  }
  if (withUsage && completion.usage !== undefined) out.push(JSON.stringify(Object.assign({}, head, { choices: [], usage: completion.usage })));
  return out;
}

export type { StoredCompletion };
