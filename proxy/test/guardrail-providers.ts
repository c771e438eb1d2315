import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';
import { decodeRecordBatch, type AuditEvent, type UsageRecord } from '@gateway/shared';
import type { Proxy } from '../src/proxy.js';

/**
 * What the guardrail tests (guardrails.test.ts, guardrails-matrix.test.ts) share: a provider
 * speaking OpenAI's wire format that records what it was sent and answers a scripted text in
 * chunks (and /moderations: a text saying "attack" is violent), and a reader of a project's
 * records in the queue.
 */
export async function bodyOf(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const part of req) raw += part;
  return raw;
}

export function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** A Chat Completions answer of `chunks`: streamed as chunks ending with a usage chunk and [DONE], or whole. */
export function openAiAnswer(body: { model: string; stream?: boolean }, chunks: readonly string[], res: ServerResponse): void {
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model };
  if (body.stream) {
    res.setHeader('content-type', 'text/event-stream');
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
    for (const c of chunks) res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } })}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: chunks.join('') }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } }));
}

/** The provider: every request but a moderation pushed to `seen` and answered `answer()`. */
export function scriptedOpenAiProvider<T>(seen: T[], answer: () => readonly string[]): Server {
  return createServer(async (req, res) => {
    const body = JSON.parse(await bodyOf(req));
    if (req.url?.endsWith('/moderations')) {
      const violent = (body.input as string[]).some((t) => t.includes('attack'));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results: [{ flagged: violent, categories: { violence: violent }, category_scores: { violence: violent ? 0.9 : 0.01 } }] }));
      return;
    }
    seen.push(body as T);
    openAiAnswer(body, answer(), res);
  });
}

/** A project's request audit events and usage records in the record queue, once the proxy has flushed. */
export async function queuedRecords(proxy: Proxy, queue: Queue, projectId: string): Promise<{ usage: UsageRecord[]; audit: AuditEvent[] }> {
  await proxy.deps.records.flush(5_000);
  const usage: UsageRecord[] = [];
  const audit: AuditEvent[] = [];
  for (const job of await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'prioritized'])) {
    const batch = decodeRecordBatch(job.data);
    usage.push(...batch.usage.filter((u) => u.project_id === projectId));
    audit.push(...batch.audit.filter((a) => a.project_id === projectId && a.type === 'gateway.request'));
  }
  return { usage, audit };
}
