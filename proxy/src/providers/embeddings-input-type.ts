import { Errors } from '@gateway/shared';
import type { EmbeddingsBody } from './adapter.js';

/**
 * `input_type`, a field OpenAI's embeddings API does not have (Cohere's name, which LiteLLM takes
 * too): what the texts are for, so that a model trained for retrieval embeds a search query and a
 * document each its own way. The adapters whose providers take it write it in their own terms
 * (Bedrock's Cohere models `input_type`, Vertex AI `task_type`, Gemini `taskType`); the others
 * ignore it (Titan), and an OpenAI-typed provider is sent the body as it came.
 */
export const INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** Google's task types for each, as Vertex AI and the Gemini API name them. */
export const GOOGLE_TASK_TYPES: Readonly<Record<InputType, string>> = {
  search_document: 'RETRIEVAL_DOCUMENT',
  search_query: 'RETRIEVAL_QUERY',
  classification: 'CLASSIFICATION',
  clustering: 'CLUSTERING',
};

/** The body's `input_type`, checked; null when it has none. */
export function inputTypeOf(body: EmbeddingsBody): InputType | null {
  const value = body.input_type;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !(INPUT_TYPES as readonly string[]).includes(value)) {
    throw Errors.invalidField('input_type', `\`input_type\` must be one of ${INPUT_TYPES.map((t) => `"${t}"`).join(', ')}.`);
  }
  return value as InputType;
}
