/**
 * The response's id and model for a traced request, read from the head of the answer (OpenAI
 * shape: `id` and `model` come first) without parsing the whole body: a sampled request pays a
 * short scan, not a JSON.parse of the completion.
 */
export interface ResponseFacts {
  id: string | null;
  model: string | null;
}

const HEAD_BYTES = 1024;
const ID = /"id"\s*:\s*"([^"\\]{1,200})"/;
const MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;

export function responseFacts(head: string): ResponseFacts {
  return { id: ID.exec(head)?.[1] ?? null, model: MODEL.exec(head)?.[1] ?? null };
}

export function completionFacts(body: Buffer): ResponseFacts {
  return responseFacts(body.subarray(0, HEAD_BYTES).toString('latin1'));
}
