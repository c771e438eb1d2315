import { Errors, GatewayError } from '@gateway/shared';
import type { EmbeddingsBody } from '../../request/internal-request.js';

/**
 * Checks an OpenAI embeddings body without copying it: unknown fields pass through to the
 * provider, known ones must have the documented type. `input` is a non-empty string, an array of
 * 1 to 2048 non-empty strings, an array of token ids (non-negative integers), or an array of 1 to
 * 2048 non-empty token-id arrays; a mix of kinds is refused, as OpenAI refuses it. The first
 * problem is reported with its field in `param`.
 */
export const MAX_EMBEDDING_INPUTS = 2048;

const MAX_MODEL = 256;

function invalid(param: string, message: string): GatewayError {
  return Errors.invalidField(param, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTokenId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export function validateEmbeddingsRequest(body: unknown): EmbeddingsBody {
  if (!isObject(body)) throw invalid('body', 'The body must be a JSON object.');

  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalid('model', '`model` is required and must be a non-empty string.');
  if (model.length > MAX_MODEL) throw invalid('model', '`model` is too long.');

  checkInput(body.input);

  const encoding = body.encoding_format;
  if (encoding !== undefined && encoding !== null && encoding !== 'float' && encoding !== 'base64') {
    throw invalid('encoding_format', '`encoding_format` must be "float" or "base64".');
  }
  const dimensions = body.dimensions;
  if (dimensions !== undefined && dimensions !== null && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions <= 0)) {
    throw invalid('dimensions', '`dimensions` must be a positive integer.');
  }
  const user = body.user;
  if (user !== undefined && user !== null && typeof user !== 'string') throw invalid('user', '`user` must be a string.');
  return body as unknown as EmbeddingsBody;
}

const INPUT_KINDS = '`input` must be a non-empty string, an array of non-empty strings, an array of token ids, or an array of non-empty token-id arrays.';

function checkInput(input: unknown): void {
  if (input === undefined || input === null) throw invalid('input', '`input` is required.');
  if (typeof input === 'string') {
    if (input.length === 0) throw invalid('input', '`input` must not be empty.');
    return;
  }
  if (!Array.isArray(input)) throw invalid('input', INPUT_KINDS);
  if (input.length === 0) throw invalid('input', '`input` must not be an empty array.');
  const first: unknown = input[0];
  if (typeof first === 'number') {
    // One text as token ids: its length is a token count, not a number of inputs.
    for (let i = 0; i < input.length; i++) if (!isTokenId(input[i])) throw invalid(`input[${i}]`, `\`input[${i}]\` must be a token id (a non-negative integer), as the items before it are.`);
    return;
  }
  if (input.length > MAX_EMBEDDING_INPUTS) throw invalid('input', `\`input\` may hold at most ${MAX_EMBEDDING_INPUTS} items (it has ${input.length}).`);
  if (typeof first === 'string') {
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      if (typeof item !== 'string') throw invalid(`input[${i}]`, `\`input[${i}]\` must be a string, as the items before it are.`);
      if (item.length === 0) throw invalid(`input[${i}]`, `\`input[${i}]\` must not be empty.`);
    }
    return;
  }
  if (!Array.isArray(first)) throw invalid('input[0]', INPUT_KINDS);
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    if (!Array.isArray(item)) throw invalid(`input[${i}]`, `\`input[${i}]\` must be an array of token ids, as the items before it are.`);
    if (item.length === 0) throw invalid(`input[${i}]`, `\`input[${i}]\` must not be empty.`);
    for (const id of item) if (!isTokenId(id)) throw invalid(`input[${i}]`, `\`input[${i}]\` must hold token ids (non-negative integers).`);
  }
}
