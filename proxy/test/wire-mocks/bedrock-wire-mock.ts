import type { ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../../test-support/wire-mock.js';
import { SCENARIOS } from '../../src/providers/conformance.case.js';
import { signThinking } from '../anthropic-thinking-answer.js';

/**
 * Amazon Bedrock's runtime API as its reference documents it: `POST /model/{modelId}/converse`
 * answers one ConverseResponse; `/converse-stream` answers `application/vnd.amazon.eventstream`,
 * binary messages (encoded with the Smithy codec the AWS SDKs use) whose `:event-type` is
 * messageStart, contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata,
 * each JSON payload padded with a `p` field as Bedrock pads them, and whose errors are
 * `:message-type: exception` messages; an HTTP error names its class in `x-amzn-ErrorType` with
 * `{"message": …}` as its body.
 *
 * Every request's SigV4 signature is recomputed with the Smithy signer from the request as it
 * arrived (its path, the headers it says it signed, its bytes and its x-amz-date) and the
 * credentials the mock was given; a mismatch, a missing session token or a wrong key id is
 * Bedrock's 403. A mock given an API key takes `Authorization: Bearer <key>` instead (any other
 * bearer token is the same 403). The model id is URL-decoded from the path; besides the conformance scenarios:
 *
 *   bedrock-unavailable   503 ServiceUnavailableException
 *   bedrock-throttled     a stream whose first message is a throttlingException
 *   bedrock-corrupt       a stream: one text piece, then a message with a broken checksum
 *   bedrock-truncated     a stream: one text piece, then half a message and the end of the body
 *   bedrock-parallel      text, then two tool calls; usage with cache reads and writes
 *   bedrock-access-denied 403 AccessDeniedException naming the caller's role session and account
 *   …anthropic.claude-thinking…  a Claude model with extended thinking (`additionalModelRequestFields.thinking`):
 *                         a signed `reasoningContent` block, then the get_weather tool called, or the
 *                         answer from its result; refused as Anthropic refuses thinking (a budget
 *                         under 1,024 or not under maxTokens, a temperature other than 1, a topP under
 *                         0.95, a forced tool, a tool loop whose last assistant turn does not start
 *                         with its signed reasoning)
 *
 * `POST /model/{modelId}/invoke` serves the embedding models in their own bodies: an Amazon Titan
 * Text Embeddings id takes `{inputText, dimensions?: 256 | 512 | 1024, normalize?}` and answers
 * `{embedding, inputTextTokenCount}`; a Cohere Embed id takes `{texts (1 to 96), input_type,
 * output_dimension? (embed-v4 only), truncate?}` and answers `{id, response_type:
 * "embeddings_floats", texts, embeddings}`. A text's vector is `(k + 1) × its length / 16` for k
 * below the dimensions (1,024 by default), its token count its word count. Any other model, or
 * another body, is a 400 ValidationException; `amazon.titan-embed-text-throttled` is a 429
 * ThrottlingException.
 */
export interface BedrockMockCredentials {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** A Bedrock API key the mock also accepts, as a bearer token. */
  apiKey?: string;
}

/** Bedrock's words when the gateway's role may not invoke the model (bedrock-access-denied). */
export const BEDROCK_ACCESS_DENIED =
  'User: arn:aws:sts::123456789012:assumed-role/GatewayInvokeRole/i-0abc123def4567890 is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0 because no identity-based policy allows the bedrock:InvokeModel action';

export interface BedrockWireMock extends RunningWireMock {
  /** Requests whose signature was checked and found right. */
  verified(): number;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const usage = { inputTokens: 6, outputTokens: 2, totalTokens: 13, cacheReadInputTokens: 3, cacheWriteInputTokens: 2 };

function awsError(res: ServerResponse, status: number, errorType: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { message }, { 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'mock-request-id', ...headers });
}

function event(type: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGH' })),
  });
}

function exception(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

function sendEvents(res: ServerResponse, messages: Uint8Array[], options: { hang?: boolean } = {}): void {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'mock-request-id' });
  let i = 0;
  const step = () => {
    if (res.destroyed) return;
    if (i >= messages.length) {
      if (!options.hang) res.end();
      return;
    }
    const message = messages[i++] as Uint8Array;
    // Split each message over two writes: the decoder must put messages together across chunks.
    const half = Math.floor(message.length / 2);
    res.write(message.subarray(0, half));
    res.write(message.subarray(half));
    setTimeout(step, 2);
  };
  step();
}

/** Recomputes the request's signature; null when it is right, else Bedrock's complaint. */
async function signatureProblem(req: WireRequest, creds: BedrockMockCredentials, signer: SignatureV4): Promise<string | null> {
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (bearer !== null) return creds.apiKey !== undefined && bearer[1] === creds.apiKey ? null : 'The security token included in the request is invalid.';
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? '');
  if (auth === null) return 'Authorization header requires Credential, SignedHeaders and Signature.';
  const [, keyId, , region, service, signedList, signature] = auth;
  if (keyId !== creds.accessKeyId) return 'The security token included in the request is invalid.';
  if (region !== creds.region || service !== 'bedrock') return `Credential should be scoped to a valid region and service bedrock.`;
  if (creds.sessionToken !== undefined && req.headers['x-amz-security-token'] !== creds.sessionToken) return 'The security token included in the request is invalid.';
  const date = req.headers['x-amz-date'];
  if (date === undefined || !/^\d{8}T\d{6}Z$/.test(date)) return 'Missing x-amz-date.';
  const names = (signedList as string).split(';');
  if (!names.includes('host')) return 'host must be signed.';
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (value === undefined) return `Signed header ${name} is missing.`;
    headers[name] = value;
  }
  const [host, port] = (req.headers.host ?? '').split(':');
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const expected = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: host ?? '', ...(port === undefined ? {} : { port: Number(port) }), path: req.path, query: {}, headers, body: req.raw },
    { signingDate, unsignableHeaders: new Set(Object.keys(req.headers).filter((h) => !names.includes(h))) },
  );
  const computed = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  return computed === signature ? null : 'The request signature we calculated does not match the signature you provided.';
}

export async function startBedrockWireMock(creds: BedrockMockCredentials): Promise<BedrockWireMock> {
  // applyChecksum off: the signature covers exactly the headers the request says it signed.
  const signer = new SignatureV4({ credentials: creds, region: creds.region, service: 'bedrock', sha256: Hash.bind(null, 'sha256'), uriEscapePath: true, applyChecksum: false });
  let verified = 0;
  const mock = await startWireMock((req, res) => {
    void (async () => {
      const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(req.path);
      if (req.method !== 'POST' || match === null) return awsError(res, 404, 'UnknownOperationException', `Unknown operation ${req.path}`);
      const problem = await signatureProblem(req, creds, signer);
      if (problem !== null) return awsError(res, 403, problem.includes('signature') ? 'InvalidSignatureException' : 'UnrecognizedClientException', problem);
      verified++;
      const model = decodeURIComponent(match[1] as string);
      if (match[2] === 'invoke') return errorAnswer(model, res) || invokeEmbedding(model, req.body, res);
      if (!Array.isArray(req.body.messages) || req.body.model !== undefined) return awsError(res, 400, 'ValidationException', 'Malformed input request: messages required, model is not a body field.');
      if (errorAnswer(model, res)) return;
      if (model.includes('anthropic.claude-thinking')) return thinkingAnswer(req.body, res, match[2] === 'converse-stream');
      if (match[2] === 'converse-stream') return stream(model, res);
      answer(model, res);
    })();
  });
  return { ...mock, verified: () => verified };
}

type ConverseBlock = { text?: string; toolUse?: unknown; toolResult?: { content?: { text?: string }[] }; reasoningContent?: { reasoningText?: { text?: string; signature?: string }; redactedContent?: string } };

function thinkingRefusal(body: Record<string, unknown>): string | null {
  const thinking = (body.additionalModelRequestFields as { thinking?: { type?: string; budget_tokens?: number } } | undefined)?.thinking;
  if (thinking?.type !== 'enabled') return null;
  const inference = (body.inferenceConfig ?? {}) as { maxTokens?: number; temperature?: number; topP?: number };
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof inference.maxTokens !== 'number' || budget >= inference.maxTokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  if (typeof inference.temperature === 'number' && inference.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled';
  if (typeof inference.topP === 'number' && inference.topP < 0.95) return '`top_p` must be greater than or equal to 0.95 when thinking is enabled';
  const choice = (body.toolConfig as { toolChoice?: Record<string, unknown> } | undefined)?.toolChoice;
  if (choice !== undefined && ('any' in choice || 'tool' in choice)) return 'Thinking may not be enabled when tool_choice forces tool use.';
  const messages = body.messages as { role?: string; content?: ConverseBlock[] }[];
  const assistant = [...messages].reverse().find((m) => m.role === 'assistant');
  const blocks = assistant?.content ?? [];
  if (!blocks.some((b) => b.toolUse !== undefined)) return null;
  const first = blocks[0]?.reasoningContent;
  if (first === undefined) return 'Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.';
  const text = first.reasoningText;
  if (text !== undefined && (typeof text.text !== 'string' || text.signature !== signThinking(text.text))) return 'Invalid `signature` in `thinking` block';
  return null;
}

/** A Claude model on Converse with extended thinking: the thought first, then the weather tool or the answer from its result. */
function thinkingAnswer(body: Record<string, unknown>, res: ServerResponse, streamed: boolean): void {
  const refused = thinkingRefusal(body);
  if (refused !== null) return awsError(res, 400, 'ValidationException', refused);
  const on = (body.additionalModelRequestFields as { thinking?: { type?: string } } | undefined)?.thinking?.type === 'enabled';
  const messages = body.messages as { role?: string; content?: ConverseBlock[] }[];
  const result = messages.at(-1)?.content?.find((b) => b.toolResult !== undefined)?.toolResult;
  const thought = result === undefined ? 'The user wants the weather in Paris.' : 'Say it.';
  const signature = signThinking(thought);
  const reply: Record<string, unknown> = result === undefined ? { toolUse: { toolUseId: 'tooluse_w1', name: 'get_weather', input: { city: 'Paris' } } } : { text: `It is ${result.content?.[0]?.text ?? ''}.` };
  const stopReason = result === undefined ? 'tool_use' : 'end_turn';
  const answerUsage = { inputTokens: 30, outputTokens: 8, totalTokens: 38 };
  if (!streamed) {
    const content = on ? [{ reasoningContent: { reasoningText: { text: thought, signature } } }, reply] : [reply];
    return sendJson(res, 200, { output: { message: { role: 'assistant', content } }, stopReason, usage: answerUsage, metrics: { latencyMs: 9 } });
  }
  const messagesOut: Uint8Array[] = [event('messageStart', { role: 'assistant' })];
  let index = 0;
  if (on) {
    messagesOut.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: thought.slice(0, 8) } } }));
    messagesOut.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: thought.slice(8) } } }));
    messagesOut.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature } } }));
    messagesOut.push(event('contentBlockStop', { contentBlockIndex: index }));
    index++;
  }
  if (result === undefined) {
    messagesOut.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: 'tooluse_w1', name: 'get_weather' } } }));
    messagesOut.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: '{"city":"Paris"}' } } }));
  } else messagesOut.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: reply.text as string } }));
  messagesOut.push(event('contentBlockStop', { contentBlockIndex: index }));
  messagesOut.push(event('messageStop', { stopReason }));
  messagesOut.push(event('metadata', { usage: answerUsage, metrics: { latencyMs: 9 } }));
  sendEvents(res, messagesOut);
}

function errorAnswer(model: string, res: ServerResponse): boolean {
  switch (model) {
    case SCENARIOS.status400:
      awsError(res, 400, 'ValidationException', 'bad request from provider');
      return true;
    case SCENARIOS.status429:
      awsError(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.', { 'retry-after': '7' });
      return true;
    case SCENARIOS.status500:
      awsError(res, 500, 'InternalServerException', 'The server encountered an internal error.');
      return true;
    case 'bedrock-unavailable':
      awsError(res, 503, 'ServiceUnavailableException', 'The service is unavailable. Please try again later.');
      return true;
    case 'bedrock-access-denied':
      awsError(res, 403, 'AccessDeniedException', BEDROCK_ACCESS_DENIED);
      return true;
    default:
      return false;
  }
}

const EMBEDDING_DIMENSIONS = 1024;
const COHERE_INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);

function vectorOf(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, k) => ((k + 1) * text.length) / 16);
}

function invokeEmbedding(model: string, body: Record<string, unknown>, res: ServerResponse): true {
  const invalid = (message: string) => awsError(res, 400, 'ValidationException', `Malformed input request: ${message}, please reformat your input and try again.`);
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  if (model === 'amazon.titan-embed-text-throttled') {
    awsError(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.', { 'retry-after': '7' });
    return true;
  }
  if (/(^|[./])amazon\.titan-embed-text/.test(model)) {
    const { inputText, dimensions, ...rest } = body;
    delete rest.normalize;
    if (typeof inputText !== 'string' || inputText === '') invalid('#: required key [inputText] not found');
    else if (dimensions !== undefined && dimensions !== 256 && dimensions !== 512 && dimensions !== 1024) invalid(`#/dimensions: ${String(dimensions)} is not a valid enum value`);
    else if (Object.keys(rest).length > 0) invalid(`#: extraneous key [${Object.keys(rest)[0]}] is not permitted`);
    else sendJson(res, 200, { embedding: vectorOf(inputText, (dimensions as number | undefined) ?? EMBEDDING_DIMENSIONS), embeddingsByType: {}, inputTextTokenCount: words(inputText) });
    return true;
  }
  if (/(^|[./])cohere\.embed/.test(model)) {
    const { texts, input_type: inputType, output_dimension: dimensions, truncate: _truncate, ...rest } = body;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || texts.some((t) => typeof t !== 'string')) invalid('#/texts: expected 1 to 96 strings');
    else if (typeof inputType !== 'string' || !COHERE_INPUT_TYPES.has(inputType)) invalid('#: required key [input_type] not found');
    else if (dimensions !== undefined && !model.includes('embed-v4')) invalid('#: extraneous key [output_dimension] is not permitted');
    else if (Object.keys(rest).length > 0) invalid(`#: extraneous key [${Object.keys(rest)[0]}] is not permitted`);
    else {
      const size = typeof dimensions === 'number' ? dimensions : EMBEDDING_DIMENSIONS;
      sendJson(res, 200, { id: 'mock-embed-1', response_type: 'embeddings_floats', texts, embeddings: (texts as string[]).map((t) => vectorOf(t, size)) });
    }
    return true;
  }
  invalid(`the model ${model} does not take an embeddings body`);
  return true;
}

function converse(content: unknown[], stopReason: string, u: Record<string, number> = usage) {
  return { output: { message: { role: 'assistant', content } }, stopReason, usage: u, metrics: { latencyMs: 42 } };
}

function answer(model: string, res: ServerResponse): void {
  switch (model) {
    case SCENARIOS.slow:
      setTimeout(() => !res.destroyed && sendJson(res, 200, converse([{ text: 'Hello there' }], 'end_turn')), 2_000);
      return;
    case SCENARIOS.tools:
      return sendJson(res, 200, converse([{ toolUse: { toolUseId: 'tooluse_wire1', name: 'get_weather', input: { city: 'Paris' } } }], 'tool_use'));
    case SCENARIOS.length:
      return sendJson(res, 200, converse([{ text: 'Hello' }], 'max_tokens'));
    case 'bedrock-parallel':
      return sendJson(res, 200, converse(parallel, 'tool_use', { inputTokens: 10, outputTokens: 20, totalTokens: 130, cacheReadInputTokens: 60, cacheWriteInputTokens: 40 }));
    default:
      return sendJson(res, 200, converse([{ text: 'Hello there' }], 'end_turn'));
  }
}

const parallel = [
  { text: 'Checking both.' },
  { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather', input: { city: 'Paris' } } },
  { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather', input: { city: 'Oslo' } } },
];

function stream(model: string, res: ServerResponse): void {
  const start = event('messageStart', { role: 'assistant' });
  const hello = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } });
  const end = (reason: string, u: Record<string, number> = usage) => [event('messageStop', { stopReason: reason }), event('metadata', { usage: u, metrics: { latencyMs: 42 } })];
  switch (model) {
    case SCENARIOS.tools:
      return sendEvents(res, [
        start,
        event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_wire1', name: 'get_weather' } } }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"city":' } } }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"Paris"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 0 }),
        ...end('tool_use'),
      ]);
    case SCENARIOS.streamError:
      return sendEvents(res, [start, hello, exception('modelStreamErrorException', 'The model failed while streaming.')]);
    case SCENARIOS.hang:
      return sendEvents(res, [start, hello], { hang: true });
    case 'bedrock-throttled':
      return sendEvents(res, [exception('throttlingException', 'Too many requests, please wait before trying again.')]);
    case 'bedrock-corrupt': {
      const broken = Uint8Array.from(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' there' } }));
      broken[broken.length - 6] = (broken[broken.length - 6] as number) ^ 0xff;
      return sendEvents(res, [start, hello, broken]);
    }
    case 'bedrock-truncated': {
      const whole = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' there' } });
      return sendEvents(res, [start, hello, whole.subarray(0, 20)]);
    }
    case 'bedrock-parallel':
      return sendEvents(res, [
        start,
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Checking both.' } }),
        event('contentBlockStop', { contentBlockIndex: 0 }),
        event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather' } } }),
        event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":"Paris"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 1 }),
        event('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather' } } }),
        event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":"Oslo"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 2 }),
        ...end('tool_use', { inputTokens: 10, outputTokens: 20, totalTokens: 130, cacheReadInputTokens: 60, cacheWriteInputTokens: 40 }),
      ]);
    default:
      return sendEvents(res, [start, hello, event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' there' } }), event('contentBlockStop', { contentBlockIndex: 0 }), ...end(model === SCENARIOS.length ? 'max_tokens' : 'end_turn')]);
  }
}
