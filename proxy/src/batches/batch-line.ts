import { createHash } from 'node:crypto';
import type { BatchRow, ClaimedLine } from '@gateway/shared';
import { RequestContext, type GatewayDeps, type RequestInfo } from '../pipeline/context.js';
import type { ClosingStep, Endpoint } from '../pipeline/endpoint.js';
import { extrasOf } from '../pipeline/request-extras.js';
import { LineExchange, type Collected, type HandedOff } from './line-exchange.js';

/**
 * Runs one line of a batch as a request of the batch's key, through the endpoint's own chain
 * (line-exchange.ts), and reports how it was answered once its closing steps (records included)
 * have run. The line's record id is made from the batch and the line, and its records carry the
 * moment the line was first claimed: a line run again after its runner died writes records with
 * the same primary key, which the writer drops, so a line is counted once.
 */
export interface LineAnswer {
  status: number;
  /** The gateway's error code when it refused or failed the line (RATE_LIMITED, UNAUTHORIZED, …); null on success. */
  errorCode: string | null;
  /** Seconds the answer asked to wait (Retry-After), when it did. */
  retryAfter: number | null;
  /** The answer's body as JSON (the endpoint's own shape, errors included). */
  body: unknown;
  requestId: string;
  /** The line went to a provider's own batch (provider-line-steps.ts): nothing was answered or recorded yet. */
  handedOff: HandedOff | null;
}

/**
 * A UUID (version 8, RFC 9562's custom layout) that is the same for the same attempt at the same
 * batch line every time: the records' id. An attempt the gateway refused and retries (rate
 * limited) keeps its own audit event; the attempt that answers has the next id. A line a
 * provider ran in its own batch is recorded when it is collected (`collected`), however often.
 */
export function lineRecordId(batchId: string, lineNo: number, attempt: number | 'collected' = 0): string {
  const hex = createHash('sha256').update(attempt === 0 ? `${batchId}:${lineNo}` : `${batchId}:${lineNo}:${attempt}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The step that hands a line's outcome back, run after the endpoint's own closing steps. */
const lineSettled: ClosingStep = (ctx) => (ctx.ex as LineExchange).settled?.(ctx);

const lineEndpoints = new WeakMap<Endpoint, Endpoint>();

/** The endpoint with the line's closing step after its own, made once per endpoint. */
function forLines(endpoint: Endpoint): Endpoint {
  let made = lineEndpoints.get(endpoint);
  if (made === undefined) {
    made = { ...endpoint, closing: [...endpoint.closing, lineSettled] };
    lineEndpoints.set(endpoint, made);
  }
  return made;
}

export interface RunningLine {
  answer: Promise<LineAnswer>;
  /** Ends the line's request now (the batch was cancelled): answered as a client leaving would be. */
  stop(): void;
}

/**
 * `collected`: the provider batch's answer the line is collected with (the collect chain's).
 * `handOff`: false to run the line here even when its provider runs batches.
 */
export function runLine(deps: GatewayDeps, endpoint: Endpoint, batch: BatchRow, keyHash: string, line: ClaimedLine, body: Buffer, attempt: number | 'collected', collected: Collected | null = null, handOff = true): RunningLine {
  const requestId = lineRecordId(batch.id, line.line_no, attempt);
  const info: RequestInfo = {
    requestId,
    clientRequestId: false,
    apiKey: '',
    keyHash,
    missingKey: null,
    clientIp: '',
    userAgent: 'gateway-batch',
    jsonBody: true,
    contentLength: body.length,
    tags: '',
    cacheControl: '',
    providerHeaders: null,
    query: '',
    pathId: '',
    contentType: '',
    host: '',
  };
  const ex = new LineExchange(requestId, body);
  ex.collected = collected;
  ex.batchLines = batch.total;
  ex.handOff = handOff;
  const answer = new Promise<LineAnswer>((resolve) => {
    ex.settled = (ctx) => {
      const text = ex.answerText();
      let parsed: unknown = null;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = { error: { message: 'The answer was not JSON.', type: 'api_error', param: null, code: 'INTERNAL' } };
      }
      resolve({ status: ctx.status, errorCode: ctx.errorCode, retryAfter: retryAfterOf(ctx), body: parsed, requestId, handedOff: ex.handedOff });
    };
  });
  const ctx = new RequestContext(deps, ex, info, forLines(endpoint));
  const extras = extrasOf(ctx);
  extras.batchId = batch.id;
  extras.recordTs = line.claimed_at;
  ex.onAbort = () => ctx.clientGone();
  ctx.run();
  return { answer, stop: () => ex.abortLine() };
}

function retryAfterOf(ctx: RequestContext): number | null {
  return (ctx.ex as LineExchange).retryAfterSent;
}
