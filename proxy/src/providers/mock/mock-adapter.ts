import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderConfig } from '@gateway/shared';
import type { AdapterFactory, ChatRequest, CompletionResult, ProviderAdapter, StreamResult } from '../adapter.js';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import { estimateTokens, newStreamMeta } from '../stream-inspector.js';

/**
 * The built-in offline provider: answers in OpenAI's format without any network, so a fresh
 * install works end to end before a real provider is configured. Options (providers file):
 * `chunks` (pieces a streamed answer is cut into, default 6) and `gap_ms` (pause between them).
 */
export class MockAdapter implements ProviderAdapter {
  readonly type = 'mock';
  readonly name: string;
  readonly models: readonly string[];
  private readonly chunks: number;
  private readonly gapMs: number;

  constructor(config: ProviderConfig) {
    this.name = config.name;
    this.models = config.models;
    this.chunks = positive(config.options.chunks, 6);
    this.gapMs = positive(config.options.gap_ms, 0);
  }

  async complete(request: ChatRequest): Promise<CompletionResult> {
    const content = reply(request.body);
    const input = estimatePromptTokens(request.body);
    const output = estimateTokens(content.length);
    const body = {
      id: `chatcmpl-${request.requestId}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    };
    return { status: 200, body: Buffer.from(JSON.stringify(body)), usage: { input, output }, finishReason: 'stop' };
  }

  async stream(request: ChatRequest, signal: AbortSignal): Promise<StreamResult> {
    const meta = newStreamMeta();
    const content = reply(request.body);
    const input = estimatePromptTokens(request.body);
    const base = { id: `chatcmpl-${request.requestId}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: request.model };
    const pieces = split(content, this.chunks);
    const gapMs = this.gapMs;
    async function* events(): AsyncGenerator<string> {
      yield JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      for (const piece of pieces) {
        if (gapMs > 0) await sleep(gapMs, undefined, { signal });
        meta.estimatedOutput += estimateTokens(piece.length);
        yield JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      }
      meta.finishReason = 'stop';
      yield JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      const output = estimateTokens(content.length);
      meta.usage = { input, output };
      if (request.clientWantsUsage) {
        yield JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } });
      }
    }
    return { meta, events: events() };
  }

  async close(): Promise<void> {}
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function lastUserText(body: Readonly<Record<string, unknown>>): string {
  const messages = body.messages as { role: string; content: unknown }[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user' && typeof m.content === 'string') return m.content;
  }
  return '';
}

function reply(body: Readonly<Record<string, unknown>>): string {
  const said = lastUserText(body).slice(0, 200);
  return `This is the gateway's built-in mock provider. You said: ${said}`;
}

function split(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export const mockFactory: AdapterFactory = {
  type: 'mock',
  create: (config) => new MockAdapter(config),
};
