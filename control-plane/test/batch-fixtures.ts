import { expect } from 'vitest';
import type { BatchApi, BatchRow, LineResult } from '@gateway/shared';
import { appendFileLines, completeFile, createFile } from '../src/db/batch-files.js';
import { createBatch, finishBatch, storeLineResults } from '../src/db/batches.js';
import type { Db } from '../src/db/connect.js';
import type { Harness } from './harness.js';

/**
 * Batches as the proxies leave them, made through the control plane's own db functions (what the
 * internal routes call): a file of request lines, a batch on it, some lines answered, and, when
 * asked, the batch ended with its output and error files.
 */
export async function newProjectWithKey(h: Harness, name: string): Promise<{ project: string; key: string }> {
  const created = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } });
  expect(created.status, created.text).toBe(201);
  const key = await h.api('POST', `/v1/projects/${created.body.id}/keys`, { token: h.adminToken, body: { name: 'batches' } });
  expect(key.status, key.text).toBe(201);
  return { project: created.body.id as string, key: key.body.id as string };
}

export function requestLine(i: number, api: BatchApi = 'openai'): string {
  return api === 'openai'
    ? JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-1', messages: [{ role: 'user', content: `Hello ${i}` }] } })
    : JSON.stringify({ custom_id: `req-${i}`, params: { model: 'mock-1', max_tokens: 16, messages: [{ role: 'user', content: `Hello ${i}` }] } });
}

/** An answer as the endpoint gave it: 2xx with a completion, else an error body. */
export function answer(lineNo: number, statusCode = 200): LineResult {
  const body = statusCode < 300 ? { id: `chatcmpl-${lineNo}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `Hi ${lineNo}` } }] } : { error: { message: 'Too many requests', type: 'rate_limit_error', code: 'RATE_LIMITED' } };
  return { line_no: lineNo, custom_id: `req-${lineNo}`, status_code: statusCode, request_id: `req_line_${lineNo}`, body };
}

export interface BatchSetup {
  api?: BatchApi;
  lines: number;
  answers?: LineResult[];
  /** Ends the batch so; `unanswered` answers the lines left (a deleted key's). */
  finish?: { outcome: 'completed' | 'cancelled' | 'failed'; unanswered?: { status_code: number; code: string; message: string } };
}

export async function makeBatch(h: Harness, project: string, key: string, setup: BatchSetup): Promise<BatchRow> {
  const api = setup.api ?? 'openai';
  // The harness's own connection, typed as the control plane's pool.
  const sql = h.sql as unknown as Db;
  const file = await createFile(sql, { project_id: project, key_id: key, purpose: api === 'openai' ? 'batch' : 'batch_requests', filename: 'requests.jsonl' });
  expect(file).not.toBeNull();
  const lines = Array.from({ length: setup.lines }, (_, i) => requestLine(i, api));
  expect(await appendFileLines(sql, file!.id, project, 0, lines)).toBe(true);
  const endpoint = api === 'openai' ? '/v1/chat/completions' : '/v1/messages';
  const done = await sql.begin((tx) => completeFile(tx, file!.id, project, { bytes: lines.join('\n').length + 1, line_count: lines.length, endpoints: { [endpoint]: 0 } }));
  expect(done).toHaveProperty('file');
  const made = await sql.begin((tx) =>
    createBatch(tx, { project_id: project, key_id: key, api, endpoint, input_file_id: file!.id, completion_window: '24h', metadata: api === 'openai' ? { job: 'nightly' } : null }),
  );
  if (!('batch' in made)) throw new Error(`the batch was refused: ${JSON.stringify(made)}`);
  if (setup.answers !== undefined && setup.answers.length > 0) await sql.begin((tx) => storeLineResults(tx, made.batch.id, setup.answers!));
  if (setup.finish === undefined) return made.batch;
  const ended = await sql.begin((tx) =>
    finishBatch(tx, made.batch.id, {
      outcome: setup.finish!.outcome,
      reason: setup.finish!.unanswered === undefined ? null : { code: setup.finish!.unanswered.code, message: setup.finish!.unanswered.message },
      unanswered: setup.finish!.unanswered ?? null,
    }),
  );
  return ended!.batch;
}
