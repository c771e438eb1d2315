import type { ServerResponse } from 'node:http';
import { sendJson, sendSse, startWireMock, type RunningWireMock } from '../../../test-support/wire-mock.js';
import { SCENARIOS } from '../../src/providers/conformance.case.js';

/**
 * The Gemini API's wire format as its reference documents it: `POST
 * /v1beta/models/{model}:generateContent` answers one GenerateContentResponse,
 * `:streamGenerateContent?alt=sse` a series of them as `data:` events (CRLF-framed, as Google's
 * servers send them), `:batchEmbedContents` answers `{embeddings: [{values}]}` (one per request, each
 * request naming the same `models/{model}` as the path, as Google requires; vector j of request i is
 * `(i + 1) * (j + 1) / 16`, `outputDimensionality` long, default GEMINI_WIRE_DIMENSIONS; no token
 * count, as the API sends none), errors as `{"error":{"code","message","status","details"}}`. The
 * scenario is the model name in the path; besides the conformance ones:
 *
 *   gem-blocked    the prompt is blocked: promptFeedback.blockReason, no candidates
 *   gem-parallel   text, then two function calls (the first with a thought signature), thinking tokens
 *   gem-safety     a stream cut by the safety filter after one piece of text
 *   gem-overloaded a stream whose first event is a 503 UNAVAILABLE error
 *   gem-other      finishReason MALFORMED_FUNCTION_CALL
 *   gem-retryinfo  429 with a RetryInfo detail and no Retry-After header
 *   gem-403        403 PERMISSION_DENIED
 *   gem-400-key    Google's answer to a wrong key (400 with ErrorInfo API_KEY_INVALID)
 *
 * With `key` set, any request without that `x-goog-api-key` gets the wrong-key answer.
 */
const usage = { promptTokenCount: 11, candidatesTokenCount: 2, totalTokenCount: 13, cachedContentTokenCount: 3, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 11 }] };
const common = { modelVersion: 'gemini-2.5-flash', responseId: 'resp-wire-1' };

function googleError(code: number, status: string, message: string, details?: unknown[]) {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

const wrongKey = googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
]);

function candidate(parts: unknown[], finishReason?: string) {
  return { content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 };
}

function response(parts: unknown[], finishReason: string | undefined, usageMetadata: unknown = usage) {
  return { candidates: [candidate(parts, finishReason)], usageMetadata, ...common };
}

const frame = (body: unknown) => `data: ${JSON.stringify(body)}\r\n\r\n`;

export function startGeminiWireMock(key?: string): Promise<RunningWireMock> {
  return startWireMock((req, res) => {
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)(\?alt=sse)?$/.exec(req.path);
    if (req.method !== 'POST' || match === null) return sendJson(res, 404, googleError(404, 'NOT_FOUND', `Invalid path ${req.path}`));
    if (key !== undefined && req.headers['x-goog-api-key'] !== key) return sendJson(res, 400, wrongKey);
    const model = decodeURIComponent(match[1] as string);
    const streaming = match[2] === 'streamGenerateContent';
    if (errorAnswer(model, res)) return;
    if (match[2] === 'batchEmbedContents') return batchEmbed(model, req.body, res);
    if (streaming) return stream(model, res, match[3] !== undefined);
    switch (model) {
      case SCENARIOS.slow:
        setTimeout(() => !res.destroyed && sendJson(res, 200, response([{ text: 'Hello there' }], 'STOP')), 2_000);
        return;
      case SCENARIOS.tools:
        return sendJson(res, 200, response([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'));
      case SCENARIOS.length:
        return sendJson(res, 200, response([{ text: 'Hello' }], 'MAX_TOKENS'));
      case 'gem-blocked':
        return sendJson(res, 200, { promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, ...common });
      case 'gem-parallel':
        return sendJson(res, 200, response(parallelParts, 'STOP', { promptTokenCount: 20, candidatesTokenCount: 10, thoughtsTokenCount: 30, totalTokenCount: 60 }));
      case 'gem-other':
        return sendJson(res, 200, response([{ text: 'Hm' }], 'MALFORMED_FUNCTION_CALL'));
      default:
        return sendJson(res, 200, response([{ text: 'Hello there' }], 'STOP'));
    }
  });
}

const parallelParts = [
  { text: 'Checking both.' },
  { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
  { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } },
];

/** Answers the error scenarios (whatever the method); false for the others. */
function errorAnswer(model: string, res: ServerResponse): boolean {
  switch (model) {
    case SCENARIOS.status400:
      sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', 'bad request from provider'));
      return true;
    case SCENARIOS.status429:
      sendJson(res, 429, googleError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }]), { 'retry-after': '7' });
      return true;
    case 'gem-retryinfo':
      sendJson(res, 429, googleError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests' }] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.2s' },
      ]));
      return true;
    case SCENARIOS.status500:
      sendJson(res, 500, googleError(500, 'INTERNAL', 'An internal error has occurred.'));
      return true;
    case 'gem-403':
      sendJson(res, 403, googleError(403, 'PERMISSION_DENIED', 'Permission denied on resource project.'));
      return true;
    case 'gem-400-key':
      sendJson(res, 400, wrongKey);
      return true;
    default:
      return false;
  }
}

export const GEMINI_WIRE_DIMENSIONS = 768;

const TASK_TYPES = new Set(['RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY']);

function batchEmbed(model: string, body: Record<string, unknown>, res: ServerResponse): void {
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0) return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: must not be empty'));
  const embeddings: { values: number[] }[] = [];
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i] as { model?: unknown; content?: { parts?: { text?: unknown }[] }; outputDimensionality?: unknown; taskType?: unknown };
    if (request.taskType !== undefined && !TASK_TYPES.has(String(request.taskType))) {
      return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', `Invalid value at 'requests[${i}].task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), "${String(request.taskType)}"`));
    }
    if (request.model !== `models/${model}`) {
      return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: model is not the same as the batch model models/${model}`));
    }
    const text = request.content?.parts?.[0]?.text;
    if (typeof text !== 'string' || text === '') return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].content: contents must not be empty`));
    const dimensions = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : GEMINI_WIRE_DIMENSIONS;
    embeddings.push({ values: Array.from({ length: dimensions }, (_, j) => ((i + 1) * (j + 1)) / 16) });
  }
  const send = () => !res.destroyed && sendJson(res, 200, { embeddings });
  if (model === SCENARIOS.slow) setTimeout(send, 2_000);
  else send();
}

function stream(model: string, res: ServerResponse, sse: boolean): void {
  // Without alt=sse Google streams one JSON array; the adapter always asks for SSE.
  if (!sse) return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', 'the adapter must ask for alt=sse'));
  const first = { candidates: [candidate([{ text: 'Hello' }])], usageMetadata: { promptTokenCount: 11, totalTokenCount: 11 }, ...common };
  switch (model) {
    case SCENARIOS.tools:
      return sendSse(res, [frame(response([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'))]);
    case SCENARIOS.streamError:
      return sendSse(res, [frame(first), frame(googleError(500, 'INTERNAL', 'An internal error has occurred.'))]);
    case SCENARIOS.hang:
      return sendSse(res, [frame(first)], { hang: true });
    case 'gem-blocked':
      return sendSse(res, [frame({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, ...common })]);
    case 'gem-parallel':
      return sendSse(res, [
        frame({ candidates: [candidate([parallelParts[0]])], usageMetadata: { promptTokenCount: 20, totalTokenCount: 20 }, ...common }),
        frame(response(parallelParts.slice(1), 'STOP', { promptTokenCount: 20, candidatesTokenCount: 10, thoughtsTokenCount: 30, totalTokenCount: 60 })),
      ]);
    case 'gem-overloaded':
      return sendSse(res, [frame(googleError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'))]);
    case 'gem-safety':
      return sendSse(res, [frame(first), frame({ candidates: [{ ...candidate([]), content: undefined, finishReason: 'SAFETY' }], usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 1, totalTokenCount: 12 }, ...common })]);
    default: {
      const last = response([{ text: ' there' }], model === SCENARIOS.length ? 'MAX_TOKENS' : 'STOP');
      return sendSse(res, [frame(first), frame(last)]);
    }
  }
}
