import { Errors } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import type { ClosingStep, Endpoint, Step } from '../pipeline/endpoint.js';
import type { PAUSE } from '../pipeline/run.js';
import { authenticate, checkKey } from '../pipeline/steps/authenticate.js';
import { parseJson, readBodyUpTo, refuseWhileDraining } from '../pipeline/steps/body.js';
import { anthropicMessages } from '../protocols/anthropic-messages/anthropic-messages.js';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import type { ErrorShape } from '../protocols/protocol.js';
import {
  cancelBatch,
  cancelMessageBatch,
  createBatch,
  createMessageBatch,
  deleteFile,
  deleteMessageBatch,
  fileContent,
  listBatches,
  listFiles,
  listMessageBatches,
  messageBatchResults,
  receiveUpload,
  retrieveBatch,
  retrieveFile,
  retrieveMessageBatch,
  storeUpload,
} from './batch-steps.js';

/**
 * The Files, Batch and Message Batches routes as chains of steps: the key first (as every route),
 * then the route's own step (batch-steps.ts). They call no provider and are audited with no
 * endpoint, as the models list is; the lines a batch runs are requests of their own.
 */
export interface BatchEndpoints {
  uploadFile: Endpoint;
  listFiles: Endpoint;
  retrieveFile: Endpoint;
  deleteFile: Endpoint;
  fileContent: Endpoint;
  createBatch: Endpoint;
  listBatches: Endpoint;
  retrieveBatch: Endpoint;
  cancelBatch: Endpoint;
  createMessageBatch: Endpoint;
  listMessageBatches: Endpoint;
  retrieveMessageBatch: Endpoint;
  messageBatchResults: Endpoint;
  cancelMessageBatch: Endpoint;
  deleteMessageBatch: Endpoint;
}

/**
 * A Message Batches body is its requests, up to BATCH_FILE_MAX_BYTES as an uploaded file may be
 * (the model routes' MAX_BODY_BYTES is for one request).
 */
function readBatchBody(ctx: RequestContext): typeof PAUSE | void {
  const limit = ctx.deps.config.batchFileMaxBytes;
  return readBodyUpTo(ctx, limit, () => ctx.fail(Errors.batchFileTooLarge(limit), 'error'));
}

export function batchEndpoints(closing: readonly ClosingStep[]): BatchEndpoints {
  const route = (errors: ErrorShape, steps: Step[]): Endpoint => ({ name: null, errors, batchRoute: true, meter: null, steps: [refuseWhileDraining, checkKey, ...steps], closing });
  const read = (errors: ErrorShape, answer: Step) => route(errors, [authenticate, answer]);
  const withBody = (errors: ErrorShape, answer: Step) => route(errors, [readBatchBody, authenticate, parseJson, answer]);
  return {
    uploadFile: route(openAiChat, [receiveUpload, authenticate, storeUpload]),
    listFiles: read(openAiChat, listFiles),
    retrieveFile: read(openAiChat, retrieveFile),
    deleteFile: read(openAiChat, deleteFile),
    fileContent: read(openAiChat, fileContent),
    createBatch: withBody(openAiChat, createBatch),
    listBatches: read(openAiChat, listBatches),
    retrieveBatch: read(openAiChat, retrieveBatch),
    cancelBatch: read(openAiChat, cancelBatch),
    createMessageBatch: withBody(anthropicMessages, createMessageBatch),
    listMessageBatches: read(anthropicMessages, listMessageBatches),
    retrieveMessageBatch: read(anthropicMessages, retrieveMessageBatch),
    messageBatchResults: read(anthropicMessages, messageBatchResults),
    cancelMessageBatch: read(anthropicMessages, cancelMessageBatch),
    deleteMessageBatch: read(anthropicMessages, deleteMessageBatch),
  };
}
