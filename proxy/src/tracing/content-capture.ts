/**
 * Prompts and completions in the GenAI conventions' message shape (`{role, parts: [{type,
 * content}]}`), for content capture (OTEL_GATEWAY_CAPTURE_CONTENT=true) only. Kept simple: text
 * and tool calls are carried, other parts (images, audio, files) are named by their type only.
 */
interface Part {
  type: string;
  [field: string]: unknown;
}

interface GenAiMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', content }];
  if (!Array.isArray(content)) return [];
  return content.map((part: { type?: unknown; text?: unknown }) =>
    part?.type === 'text' && typeof part.text === 'string' ? { type: 'text', content: part.text } : { type: typeof part?.type === 'string' ? part.type : 'unknown' },
  );
}

function toolCallParts(calls: unknown): Part[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
    type: 'tool_call',
    id: call?.id,
    name: call?.function?.name,
    arguments: call?.function?.arguments,
  }));
}

/** The request's messages (OpenAI Chat Completions shape, as every inbound API is parsed into). */
export function inputMessages(messages: unknown): GenAiMessage[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((m: { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown }) => {
    const role = typeof m?.role === 'string' ? m.role : 'user';
    if (role === 'tool') return { role, parts: [{ type: 'tool_call_response', id: m.tool_call_id, response: m.content }] };
    return { role, parts: [...contentParts(m?.content), ...toolCallParts(m?.tool_calls)] };
  });
}

export function outputMessages(text: string, finishReason: string | null): GenAiMessage[] {
  const message: GenAiMessage = { role: 'assistant', parts: [{ type: 'text', content: text }] };
  if (finishReason !== null) message.finish_reason = finishReason;
  return [message];
}

/** The answer's text in a whole completion (OpenAI shape), '' when it has none. */
export function completionText(body: Buffer): string {
  try {
    const content = (JSON.parse(body.toString('utf8')) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : '';
  } catch {
    return '';
  }
}

/** The text a stream chunk (OpenAI chunk shape) adds, '' when none. */
export function chunkText(data: string): string {
  try {
    const content = (JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
    return typeof content === 'string' ? content : '';
  } catch {
    return '';
  }
}
