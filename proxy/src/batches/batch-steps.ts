import type { Readable } from 'node:stream';
import { Errors, GatewayError, type BatchEndpoint, type BatchRow, type StoredLineResult } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import { CLIENT_CLOSED } from '../pipeline/exits.js';
import type { BatchServices } from './batch-services.js';
import { FileUpload } from './file-upload.js';
import { JsonlSplitter } from './jsonl-splitter.js';
import { anthropicRequests } from './anthropic-requests.js';
import { messageBatchObject, resultLine } from './anthropic-batch-objects.js';
import { batchObject, fileObject, listObject, outputLine } from './openai-batch-objects.js';

/**
 * The steps of the Files, Batch and Message Batches routes, after the key is adopted: each asks
 * the control plane (batch-store.ts) for the key's project only, so another project's id is not
 * found, and words the answer in its API's shape. No provider is called and nothing is metered;
 * each request is audited as the models list is. The lines themselves run later (batch-runner.ts).
 */
type Answer = (ctx: RequestContext, batches: BatchServices) => Promise<void>;

function withBatches(answer: Answer): (ctx: RequestContext) => void | Promise<void> {
  return (ctx) => {
    const batches = ctx.deps.batches ?? null;
    if (batches === null) return ctx.fail(Errors.batchesOff(), 'error');
    return answer(ctx, batches).catch((err: unknown) => {
      if (ctx.finished) return;
      if (ctx.ex.headersSent) return ctx.fail(Errors.batchStoreUnavailable('the answer was cut'), 'error');
      ctx.fail(err instanceof GatewayError ? err : Errors.batchStoreUnavailable('no answer'), 'error');
    });
  };
}

function send(ctx: RequestContext, body: unknown, status = 200): void {
  if (ctx.ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ctx.ex.send(status, 'application/json', JSON.stringify(body));
  ctx.finish('success', status, null);
}

/** `limit` from the query: an integer in 1..max, or the default. */
function limitOf(query: URLSearchParams, fallback: number, max: number): number {
  const text = query.get('limit');
  if (text === null) return fallback;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw Errors.invalidField('limit', `\`limit\` must be an integer from 1 to ${max}.`);
  return limit;
}

// --- Files -------------------------------------------------------------------------------------

/** POST /v1/files, inside the request callback: the body is taken over and held until the key is adopted. */
export function receiveUpload(ctx: RequestContext): void {
  const { config } = ctx.deps;
  if (ctx.deps.batches === null || ctx.deps.batches === undefined) return ctx.fail(Errors.batchesOff(), 'error');
  if (!ctx.info.contentType.toLowerCase().startsWith('multipart/form-data')) return ctx.fail(Errors.badUpload('send the file as multipart/form-data, with `purpose` and `file` fields'), 'error');
  // A declared length over the limit (and the multipart framing's few hundred bytes) is refused before a byte is read.
  if (ctx.info.contentLength > config.batchFileMaxBytes + 64 * 1024) return ctx.fail(Errors.batchFileTooLarge(config.batchFileMaxBytes), 'error');
  ctx.upload = new FileUpload(ctx.ex, ctx.info.contentType, { maxBytes: config.batchFileMaxBytes, maxLines: config.batchMaxLines });
  ctx.upload.receive();
}

export const storeUpload = withBatches(async (ctx, batches) => {
  const file = await (ctx.upload as FileUpload).start(batches.store, ctx.projectId, ctx.keyId);
  send(ctx, fileObject(file));
});

export const listFiles = withBatches(async (ctx, { store }) => {
  const query = new URLSearchParams(ctx.info.query);
  const forward = new URLSearchParams();
  forward.set('limit', String(limitOf(query, 10_000, 10_000)));
  for (const name of ['purpose', 'after', 'order']) {
    const value = query.get(name);
    if (value !== null) forward.set(name, value);
  }
  const order = forward.get('order');
  if (order !== null && order !== 'asc' && order !== 'desc') throw Errors.invalidField('order', '`order` must be asc or desc.');
  const page = await store.listFiles(ctx.projectId, forward);
  send(ctx, listObject(page.data.map(fileObject), page.has_more));
});

export const retrieveFile = withBatches(async (ctx, { store }) => {
  const file = await store.getFile(ctx.info.pathId, ctx.projectId);
  if (file === null) throw Errors.noSuchFile();
  send(ctx, fileObject(file));
});

export const deleteFile = withBatches(async (ctx, { store }) => {
  if (!(await store.deleteFile(ctx.info.pathId, ctx.projectId))) throw Errors.noSuchFile();
  send(ctx, { id: ctx.info.pathId, object: 'file', deleted: true });
});

/** GET /v1/files/{id}/content: an input file as uploaded; an output or error file made from the batch's results. */
export const fileContent = withBatches(async (ctx, { store }) => {
  const file = await store.getFile(ctx.info.pathId, ctx.projectId);
  if (file === null) throw Errors.noSuchFile();
  const content = await store.fileContent(file.id, ctx.projectId);
  if (content === null) throw Errors.noSuchFile();
  const batchId = file.batch_id;
  if (batchId === null) return pipeOut(ctx, content, null);
  return pipeOut(ctx, content, (text) => outputLine(batchId, JSON.parse(text) as StoredLineResult));
});

/**
 * Streams a control-plane answer to the client as JSON lines, each line rewritten by `render`
 * when given (a stored result into its API's shape), with the client's backpressure: the control
 * plane's stream is not read while the socket is full. A client that leaves stops the read.
 */
async function pipeOut(ctx: RequestContext, content: Readable, render: ((text: string) => string) | null): Promise<void> {
  const { ex } = ctx;
  ex.startStreamWith(200, [['content-type', 'application/jsonl']]);
  let out: string[] = [];
  const splitter = render === null ? null : new JsonlSplitter((text) => text !== '' && out.push(`${render(text)}\n`));
  try {
    for await (const chunk of content) {
      if (ex.aborted) break;
      let ok = true;
      if (splitter === null) ok = ex.write(chunk as Buffer);
      else {
        splitter.push(chunk as Buffer);
        if (out.length > 0) ok = ex.write(out.join(''));
        out = [];
      }
      if (!ok) await ex.drain();
    }
    splitter?.end();
    if (out.length > 0 && !ex.aborted) ex.write(out.join(''));
  } finally {
    content.destroy();
  }
  if (ex.aborted) return ctx.finish('cancelled', CLIENT_CLOSED, null);
  ex.endStream();
  ctx.finish('success', 200, null);
}

// --- OpenAI batches ----------------------------------------------------------------------------

const OPENAI_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/embeddings', '/v1/responses']);

export const createBatch = withBatches(async (ctx, batches) => {
  const body = ctx.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw Errors.invalidField('body', 'The body must be a JSON object.');
  const { input_file_id: inputFileId, endpoint, completion_window: window, metadata } = body as Record<string, unknown>;
  if (typeof inputFileId !== 'string' || inputFileId === '') throw Errors.invalidField('input_file_id', '`input_file_id` must be the id of a file of purpose "batch".');
  if (typeof endpoint !== 'string' || !OPENAI_ENDPOINTS.has(endpoint)) throw Errors.invalidField('endpoint', '`endpoint` must be /v1/chat/completions, /v1/embeddings or /v1/responses.');
  if (window !== '24h') throw Errors.invalidField('completion_window', '`completion_window` must be "24h".');
  const batch = await batches.store.createBatch({ project_id: ctx.projectId, key_id: ctx.keyId, api: 'openai', endpoint: endpoint as BatchEndpoint, input_file_id: inputFileId, completion_window: window, metadata: metadataOf(metadata) });
  await batches.queue.add(batch.id);
  send(ctx, batchObject(batch));
});

export const retrieveBatch = withBatches(async (ctx, { store }) => {
  send(ctx, batchObject(await openAiBatch(ctx, store)));
});

export const cancelBatch = withBatches(async (ctx, { store, queue }) => {
  await openAiBatch(ctx, store);
  const batch = await store.cancelBatch(ctx.info.pathId, ctx.projectId);
  if (batch === null) throw Errors.noSuchBatch();
  // A batch waiting for its provider's batch runs now, to cancel it there.
  queue.wake(batch.id);
  send(ctx, batchObject(batch));
});

export const listBatches = withBatches(async (ctx, { store }) => {
  const query = new URLSearchParams(ctx.info.query);
  const forward = new URLSearchParams({ api: 'openai', limit: String(limitOf(query, 20, 100)) });
  const after = query.get('after');
  if (after !== null) forward.set('after', after);
  const page = await store.listBatches(ctx.projectId, forward);
  send(ctx, listObject(page.data.map(batchObject), page.has_more));
});

async function openAiBatch(ctx: RequestContext, store: BatchServices['store']): Promise<BatchRow> {
  const batch = await store.getBatch(ctx.info.pathId, ctx.projectId);
  if (batch === null || batch.api !== 'openai') throw Errors.noSuchBatch();
  return batch;
}

/** OpenAI's metadata: up to 16 string pairs, keys up to 64 characters, values up to 512. */
function metadataOf(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw Errors.invalidField('metadata', '`metadata` must be an object of strings.');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 16) throw Errors.invalidField('metadata', '`metadata` holds at most 16 pairs.');
  for (const [key, v] of entries) {
    if (key.length > 64 || typeof v !== 'string' || v.length > 512) throw Errors.invalidField('metadata', '`metadata` keys are up to 64 characters, values strings up to 512.');
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

// --- Anthropic message batches -----------------------------------------------------------------

/** The gateway's own address as the client reached it, for `results_url`. */
function baseUrlOf(ctx: RequestContext): string {
  return `http://${ctx.info.host || `127.0.0.1:${ctx.deps.config.port}`}`;
}

export const createMessageBatch = withBatches(async (ctx, batches) => {
  const lines = anthropicRequests(ctx.json, ctx.deps.config.batchMaxLines);
  const { store } = batches;
  const file = await store.createFile({ project_id: ctx.projectId, key_id: ctx.keyId, purpose: 'batch_requests', filename: 'requests.jsonl' });
  try {
    for (let first = 0; first < lines.length; first += 2_000) {
      await store.appendLines(file.id, { project_id: ctx.projectId, first_line: first, lines: lines.slice(first, first + 2_000) });
    }
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    await store.completeFile(file.id, { project_id: ctx.projectId, bytes, line_count: lines.length, endpoints: { '/v1/messages': 0 } });
  } catch (err) {
    void store.deleteFile(file.id, ctx.projectId).catch(() => {});
    throw err;
  }
  const batch = await store.createBatch({ project_id: ctx.projectId, key_id: ctx.keyId, api: 'anthropic', endpoint: '/v1/messages', input_file_id: file.id, completion_window: '24h', metadata: null });
  await batches.queue.add(batch.id);
  send(ctx, messageBatchObject(batch, baseUrlOf(ctx)));
});

async function anthropicBatch(ctx: RequestContext, store: BatchServices['store']): Promise<BatchRow> {
  const batch = await store.getBatch(ctx.info.pathId, ctx.projectId);
  if (batch === null || batch.api !== 'anthropic') throw Errors.noSuchBatch();
  return batch;
}

export const retrieveMessageBatch = withBatches(async (ctx, { store }) => {
  send(ctx, messageBatchObject(await anthropicBatch(ctx, store), baseUrlOf(ctx)));
});

export const cancelMessageBatch = withBatches(async (ctx, { store, queue }) => {
  const found = await anthropicBatch(ctx, store);
  // Anthropic answers a batch that has ended as it is.
  if (found.status !== 'in_progress' && found.status !== 'validating' && found.status !== 'cancelling') return send(ctx, messageBatchObject(found, baseUrlOf(ctx)));
  const batch = await store.cancelBatch(found.id, ctx.projectId);
  if (batch === null) throw Errors.noSuchBatch();
  queue.wake(batch.id);
  send(ctx, messageBatchObject(batch, baseUrlOf(ctx)));
});

/** Anthropic's answer to a deletion: the id and `message_batch_deleted`; a batch still running is a 400. */
export const deleteMessageBatch = withBatches(async (ctx, { store }) => {
  const found = await anthropicBatch(ctx, store);
  const deleted = await store.deleteBatch(found.id, ctx.projectId);
  if (deleted === null) throw Errors.noSuchBatch();
  send(ctx, { id: deleted.id, type: 'message_batch_deleted' });
});

export const listMessageBatches = withBatches(async (ctx, { store }) => {
  const query = new URLSearchParams(ctx.info.query);
  const forward = new URLSearchParams({ api: 'anthropic', limit: String(limitOf(query, 20, 1000)) });
  const after = query.get('after_id');
  if (after !== null) forward.set('after', after);
  const page = await store.listBatches(ctx.projectId, forward);
  const data = page.data.map((batch) => messageBatchObject(batch, baseUrlOf(ctx)));
  send(ctx, { data, has_more: page.has_more, first_id: (data[0]?.id as string | undefined) ?? null, last_id: (data.at(-1)?.id as string | undefined) ?? null });
});

/** GET /v1/messages/batches/{id}/results: every request's result, once the batch has ended. */
export const messageBatchResults = withBatches(async (ctx, { store }) => {
  const batch = await anthropicBatch(ctx, store);
  if (batch.status === 'in_progress' || batch.status === 'validating' || batch.status === 'cancelling') throw Errors.batchStillRunning();
  const content = await store.batchResults(batch.id, ctx.projectId);
  if (content === null) throw Errors.noSuchBatch();
  return pipeOut(ctx, content, (text) => resultLine(JSON.parse(text) as StoredLineResult));
});
