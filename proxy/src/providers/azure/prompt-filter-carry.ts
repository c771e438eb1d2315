import type { ChunkRewrite } from '../openai/openai-compatible-adapter.js';

/**
 * Azure opens a stream with a chunk of its own: `choices: []`, empty `id`, `object` and `model`,
 * and the content filter's verdict on the prompt in `prompt_filter_results`. OpenAI clients read
 * `choices[0]` of every chunk that is not the usage chunk, and some fail on it, so the chunk is held
 * back and its `prompt_filter_results`, untouched, ride on the next chunk that has choices (the
 * role chunk). Every other chunk, `content_filter_results` inside choices included, passes as sent.
 */
export function carryPromptFilters(): ChunkRewrite {
  let pending: unknown[] | null = null;
  return (data) => {
    if (pending === null && !data.includes('"prompt_filter_results"')) return data;
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return data;
    }
    if (typeof chunk !== 'object' || chunk === null || !Array.isArray(chunk.choices)) return data;
    const filters = chunk.prompt_filter_results;
    if (chunk.choices.length === 0 && (chunk.usage === undefined || chunk.usage === null) && filters !== undefined) {
      pending = [...(pending ?? []), ...(Array.isArray(filters) ? filters : [filters])];
      return null;
    }
    if (pending === null || chunk.choices.length === 0) return data;
    const merged = Object.assign({}, chunk, { prompt_filter_results: [...pending, ...(Array.isArray(filters) ? filters : [])] });
    pending = null;
    return JSON.stringify(merged);
  };
}
