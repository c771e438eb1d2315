import { createSseDecoder } from '@gateway/shared';
import { answerOf, type RequestId } from './jsonrpc.js';
import { headerOf, type McpUpstream } from './mcp-upstreams.js';

/**
 * One JSON-RPC exchange the gateway makes itself on a client's behalf (the aggregate endpoint's
 * initialize and tools/list): the server's answer, from a JSON body or from its SSE stream (read
 * up to the answer, then closed).
 */
export interface RpcOutcome {
  status: number;
  /** The session the server opened (initialize), '' when none. */
  sessionId: string;
  /** The answer to the request, null when the server sent none (an HTTP error, a notification's 202). */
  message: Record<string, unknown> | null;
}

export async function upstreamRpc(
  upstream: McpUpstream,
  body: Record<string, unknown>,
  session: { sessionId: string; protocolVersion: string },
  signal: AbortSignal,
): Promise<RpcOutcome> {
  const res = await upstream.send({ method: 'POST', ...session, accept: 'application/json, text/event-stream', body: JSON.stringify(body), signal });
  const sessionId = headerOf(res.headers, 'mcp-session-id');
  const id = typeof body.id === 'string' || typeof body.id === 'number' ? (body.id as RequestId) : null;
  const type = headerOf(res.headers, 'content-type');
  if (res.statusCode >= 300 || id === null) {
    await res.body.dump();
    return { status: res.statusCode, sessionId, message: null };
  }
  if (!type.startsWith('text/event-stream')) {
    const parsed = (await res.body.json().catch(() => null)) as unknown;
    return { status: res.statusCode, sessionId, message: answerOf(parsed, id) === null ? null : (parsed as Record<string, unknown>) };
  }
  let found: Record<string, unknown> | null = null;
  const decoder = createSseDecoder((event) => {
    if (found !== null) return;
    try {
      const message: unknown = JSON.parse(event.data);
      if (answerOf(message, id) !== null) found = message as Record<string, unknown>;
    } catch {
      // Not a message: skipped.
    }
  });
  const text = new TextDecoder();
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    decoder.feed(text.decode(chunk, { stream: true }));
    if (found !== null) break;
  }
  res.body.destroy();
  return { status: res.statusCode, sessionId, message: found };
}
