import { setTimeout as sleep } from 'node:timers/promises';
import { normaliseFinishReason, type ModelEntry, type ProviderConfig } from '@gateway/shared';
import type { Cancel } from '../cancel.js';
import type { AdapterFactory, ChatRequest, CompletionResult, EmbeddingsRequest, EmbeddingsResult, ProviderAdapter, StreamResult } from '../adapter.js';
import { newStreamMeta } from '../stream-inspector.js';
import { mockAnswer } from './mock-answer.js';
import { mockEmbeddings } from './mock-embeddings.js';
import { countPromptTokens } from './mock-tokens.js';

/**
 * The built-in offline provider: answers in OpenAI's format without any network, so a fresh
 * install works end to end before a real provider is configured, and deterministically, honouring
 * max_tokens, stop, tools and content parts as a real provider does (mock-answer.ts says how);
 * embeddings are vectors drawn from a hash of each input (mock-embeddings.ts). Options
 * (providers file): `chunks` (pieces a streamed answer is cut into, default 6) and `gap_ms`
 * (pause between them).
 */
export class MockAdapter implements ProviderAdapter {
  readonly type = 'mock';
  readonly name: string;
  readonly models: readonly ModelEntry[];
  private readonly chunks: number;
  private readonly gapMs: number;

  constructor(config: ProviderConfig) {
    this.name = config.name;
    this.models = config.models;
    this.chunks = Math.max(1, positive(config.options.chunks, 6));
    this.gapMs = positive(config.options.gap_ms, 0);
  }

  async complete(request: ChatRequest): Promise<CompletionResult> {
    const answer = mockAnswer(request.body);
    const input = countPromptTokens(request.body);
    const output = answer.outputTokens;
    const call = answer.toolCall;
    const message =
      call === null
        ? { role: 'assistant', content: answer.contentTokens.join(''), refusal: null }
        : { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentTokens.join('') } }] };
    const body = {
      id: `chatcmpl-${request.requestId}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finish }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    };
    return { status: 200, body: Buffer.from(JSON.stringify(body)), usage: { input, output }, finishReason: normaliseFinishReason(answer.finish) };
  }

  async stream(request: ChatRequest, cancel: Cancel): Promise<StreamResult> {
    const meta = newStreamMeta();
    const answer = mockAnswer(request.body);
    const input = countPromptTokens(request.body);
    const base = { id: `chatcmpl-${request.requestId}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: request.model };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const { chunks, gapMs } = this;
    async function* events(): AsyncGenerator<string> {
      const call = answer.toolCall;
      yield chunk({ role: 'assistant', content: call === null ? '' : null });
      if (call !== null) {
        // OpenAI's shape: the call's id, type and name first, then its arguments in pieces.
        yield chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
        meta.estimatedOutput += 1;
      }
      for (const piece of pieces(call === null ? answer.contentTokens : call.argumentTokens, chunks)) {
        if (gapMs > 0) await sleep(gapMs, undefined, { signal: cancel.signal });
        else if (cancel.aborted) return;
        meta.estimatedOutput += piece.length;
        const text = piece.join('');
        yield chunk(call === null ? { content: text } : { tool_calls: [{ index: 0, function: { arguments: text } }] });
      }
      meta.finishReason = normaliseFinishReason(answer.finish);
      yield chunk({}, answer.finish);
      meta.usage = { input, output: answer.outputTokens };
      if (request.clientWantsUsage) {
        yield JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: input, completion_tokens: answer.outputTokens, total_tokens: input + answer.outputTokens } });
      }
    }
    return { meta, events: events() };
  }

  async embed(request: EmbeddingsRequest): Promise<EmbeddingsResult> {
    return mockEmbeddings(request);
  }

  async close(): Promise<void> {}
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** Tokens in `n` pieces of nearly equal size (fewer when there are fewer tokens). */
function pieces(tokens: readonly string[], n: number): string[][] {
  const size = Math.max(1, Math.ceil(tokens.length / n));
  const out: string[][] = [];
  for (let i = 0; i < tokens.length; i += size) out.push(tokens.slice(i, i + size));
  return out;
}


export const mockFactory: AdapterFactory = {
  type: 'mock',
  defaultBaseUrl: null,
  usesBaseUrl: false,
  create: (config) => new MockAdapter(config),
};
