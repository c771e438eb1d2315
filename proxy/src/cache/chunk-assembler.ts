import type { Usage } from '../request/internal-request.js';

/**
 * A streamed answer's internal chunks (OpenAI chat.completion.chunk JSON) put back together as the
 * chat.completion a non-streamed request would have got, so a streamed miss can be stored once and
 * replayed either way. Content and refusals are concatenated, tool calls gathered by index with
 * their arguments joined; logprobs are not kept. `content_filter` tells the caller the answer was
 * withheld (by the provider or an output guardrail) and must not be stored.
 */
interface ChoiceParts {
  content: string | null;
  refusal: string | null;
  toolCalls: { id: string; type: string; name: string; arguments: string }[];
  finishReason: string | null;
}

interface ChunkDelta {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: { index?: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
}

interface Chunk {
  id?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
  choices?: { index?: number; delta?: ChunkDelta; finish_reason?: string | null }[];
  usage?: Record<string, unknown> | null;
}

export class ChunkAssembler {
  private id = '';
  private created = 0;
  private model = '';
  private fingerprint: string | null | undefined;
  private readonly choices: ChoiceParts[] = [];
  private usage: Record<string, unknown> | null = null;

  add(data: string): void {
    const chunk = JSON.parse(data) as Chunk;
    if (typeof chunk.id === 'string' && this.id === '') this.id = chunk.id;
    if (typeof chunk.created === 'number' && this.created === 0) this.created = chunk.created;
    if (typeof chunk.model === 'string' && this.model === '') this.model = chunk.model;
    if (chunk.system_fingerprint !== undefined) this.fingerprint = chunk.system_fingerprint;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      const parts = (this.choices[choice.index ?? 0] ??= { content: null, refusal: null, toolCalls: [], finishReason: null });
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string') parts.content = (parts.content ?? '') + delta.content;
      if (typeof delta.refusal === 'string') parts.refusal = (parts.refusal ?? '') + delta.refusal;
      for (const call of delta.tool_calls ?? []) {
        const at = call.index ?? parts.toolCalls.length;
        const slot = (parts.toolCalls[at] ??= { id: '', type: 'function', name: '', arguments: '' });
        if (call.id) slot.id = call.id;
        if (call.type) slot.type = call.type;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) parts.finishReason = choice.finish_reason;
    }
  }

  /** Some choice ended on `content_filter`: the answer was withheld. */
  get filtered(): boolean {
    return this.choices.some((c) => c?.finishReason === 'content_filter');
  }

  /** The chat.completion; `usage` from the usage chunk, else the counts the stream was metered with. */
  completion(counted: Usage | null): Record<string, unknown> {
    const choices = this.choices.map((parts, index) => {
      const calls = parts.toolCalls.length > 0;
      // A tool-calling answer with no text has null content, as a provider's whole answer would.
      const content = calls && (parts.content === null || parts.content === '') ? null : (parts.content ?? '');
      const message: Record<string, unknown> = { role: 'assistant', content, refusal: parts.refusal };
      if (calls) {
        message.tool_calls = parts.toolCalls.filter(Boolean).map((c) => ({ id: c.id, type: c.type, function: { name: c.name, arguments: c.arguments } }));
      }
      return { index, message, logprobs: null, finish_reason: parts.finishReason ?? 'stop' };
    });
    const usage =
      this.usage ??
      (counted === null ? undefined : { prompt_tokens: counted.input, completion_tokens: counted.output, total_tokens: counted.input + counted.output, ...(counted.cached ? { prompt_tokens_details: { cached_tokens: counted.cached } } : {}) });
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices,
      ...(usage === undefined ? {} : { usage }),
      ...(this.fingerprint === undefined ? {} : { system_fingerprint: this.fingerprint }),
    };
  }
}
