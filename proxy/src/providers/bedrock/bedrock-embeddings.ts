import { Errors } from '@gateway/shared';
import type { EmbeddingsRequest, EmbeddingsResult } from '../adapter.js';
import { boundedCalls, SPLIT_IN_FLIGHT } from '../bounded-all.js';
import type { Cancel } from '../cancel.js';
import { embeddingInputs, embeddingsAnswer, encodingOf, isVector } from '../embeddings-answer.js';
import { inputTypeOf } from '../embeddings-input-type.js';
import { estimateEmbeddingsTokens } from '../../policy/embeddings-estimate.js';
import { toCount } from '../stream-inspector.js';
import { transportError } from '../upstream-error.js';
import type { UpstreamResponse } from '../upstream-request.js';

/**
 * OpenAI's embeddings request as Bedrock's InvokeModel (`POST /model/{modelId}/invoke`), whose
 * body is each model family's own (Converse has no embeddings):
 *
 * - Amazon Titan Text Embeddings (`amazon.titan-embed-text-*`): one text a request,
 *   `{inputText, dimensions?}` answered `{embedding, inputTextTokenCount}`; a list of inputs is
 *   sent as one request per text, eight at a time, the vectors put back in order and the token
 *   counts summed.
 * - Cohere Embed (`cohere.embed-*`): up to 96 texts a request, `{texts, input_type,
 *   output_dimension?}` (`input_type` the client's, embeddings-input-type.ts, or
 *   `search_document`), answered `{embeddings: [[…]]}` (or, by type, `{embeddings: {float:
 *   [[…]]}}`); Cohere reports no token count, so the input is billed at the gateway's estimate.
 *
 * The family is read from the model id, which may carry a cross-region prefix (`us.`) or be an
 * ARN. Any other model, and token ids, are refused 400 before anything is sent.
 */
export type InvokeSend = (payload: Buffer, cancel: Cancel, request: EmbeddingsRequest) => Promise<UpstreamResponse>;

const COHERE_MAX_TEXTS = 96;
const TITAN = /(^|[./])amazon\.titan-embed-text/;
const COHERE = /(^|[./])cohere\.embed/;

type Family = 'titan' | 'cohere';

export function embeddingsFamily(model: string): Family | null {
  return TITAN.test(model) ? 'titan' : COHERE.test(model) ? 'cohere' : null;
}

/** The InvokeModel bodies an embeddings request becomes, in input order. */
export function toInvokeBodies(request: EmbeddingsRequest, family: Family): Record<string, unknown>[] {
  const inputs = embeddingInputs(request.body.input);
  if (inputs.kind !== 'text') throw Errors.invalidField('input', 'Bedrock embedding models embed text only: `input` must be a string or an array of strings, not token ids.');
  const dimensions = request.body.dimensions;
  const sized = typeof dimensions === 'number';
  const inputType = inputTypeOf(request.body) ?? 'search_document';
  if (family === 'titan') return inputs.texts.map((inputText) => (sized ? { inputText, dimensions } : { inputText }));
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < inputs.texts.length; i += COHERE_MAX_TEXTS) {
    const texts = inputs.texts.slice(i, i + COHERE_MAX_TEXTS);
    out.push(sized ? { texts, input_type: inputType, output_dimension: dimensions } : { texts, input_type: inputType });
  }
  return out;
}

export async function bedrockEmbed(provider: string, request: EmbeddingsRequest, cancel: Cancel, send: InvokeSend): Promise<EmbeddingsResult> {
  const family = embeddingsFamily(request.upstreamModel);
  if (family === null) {
    throw Errors.invalidField('model', `The model \`${request.model}\` is not an embedding model this gateway can call on Bedrock (Amazon Titan Text Embeddings and Cohere Embed are).`);
  }
  const bodies = toInvokeBodies(request, family);
  const answers = await boundedCalls(cancel, bodies.length, SPLIT_IN_FLIGHT, (i, own) => invoke(provider, bodies[i] as Record<string, unknown>, request, own, send));
  const vectors: (number[] | string)[] = [];
  let counted = 0;
  let uncounted = family === 'cohere';
  for (let i = 0; i < answers.length; i++) {
    const answer = answers[i] as Record<string, unknown>;
    if (family === 'titan') {
      vectors.push(vectorOf(provider, answer.embedding, `embedding of input ${i}`));
      if (typeof answer.inputTextTokenCount === 'number') counted += toCount(answer.inputTextTokenCount);
      else uncounted = true;
      continue;
    }
    const expected = ((bodies[i] as { texts: string[] }).texts).length;
    const raw = answer.embeddings;
    const list = Array.isArray(raw) ? raw : typeof raw === 'object' && raw !== null ? (raw as { float?: unknown }).float : undefined;
    if (!Array.isArray(list) || list.length !== expected) throw Errors.providerEmbeddingsCount(provider, Array.isArray(list) ? list.length : null, expected);
    for (let j = 0; j < list.length; j++) vectors.push(vectorOf(provider, list[j], `embeddings[${j}]`));
  }
  const input = uncounted ? estimateEmbeddingsTokens(request.body.input) : counted;
  return { body: embeddingsAnswer(request.model, vectors, encodingOf(request.body), input), usage: { input } };
}

function vectorOf(provider: string, value: unknown, where: string): number[] {
  if (!Array.isArray(value) || !isVector(value)) throw Errors.providerNotAnEmbedding(provider, where);
  return value as number[];
}

async function invoke(provider: string, body: Record<string, unknown>, request: EmbeddingsRequest, cancel: Cancel, send: InvokeSend): Promise<Record<string, unknown>> {
  const res = await send(Buffer.from(JSON.stringify(body)), cancel, request);
  let raw: Buffer;
  try {
    raw = await res.body();
  } catch (err) {
    throw transportError(provider, err, cancel.aborted);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(raw.toString('utf8'));
  } catch {
    throw Errors.providerNotJson(provider);
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw Errors.providerSentNot(provider, 'an object');
  return answer as Record<string, unknown>;
}
