import { createSseDecoder } from '@gateway/shared';
import type { Cancel } from '../providers/cancel.js';
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
  cancel: Cancel,
): Promise<RpcOutcome> {
  const res = await upstream.send({ method: 'POST', ...session, accept: 'application/json, text/event-stream', body: JSON.stringify(body), cancel });
  const sessionId = headerOf(res, 'mcp-session-id');
  const id = typeof body.id === 'string' || typeof body.id === 'number' ? (body.id as RequestId) : null;
  const type = headerOf(res, 'content-type');
  if (res.status >= 300 || id === null) {
    await res.body().catch(() => null);
    return { status: res.status, sessionId, message: null };
  }
  if (!type.startsWith('text/event-stream')) {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse((await res.body()).toString('utf8'));
    } catch {
      // Not JSON: no answer.
    }
    return { status: res.status, sessionId, message: answerOf(parsed, id) === null ? null : (parsed as Record<string, unknown>) };
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
  for await (const chunk of res.stream()) {
    decoder.feed(text.decode(chunk, { stream: true }));
    if (found !== null) break;
  }
  res.destroy();
  return { status: res.status, sessionId, message: found };
}
