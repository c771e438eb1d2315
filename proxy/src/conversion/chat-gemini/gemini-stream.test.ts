import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { newStreamMeta } from '../../providers/stream-inspector.js';
import { GeminiStreamTranslator } from './gemini-stream.js';
import { toChatCompletion } from './gemini-response.js';

const ctx = { id: 'chatcmpl-1', model: 'gw-model', created: 1_700_000_000, firstCall: 0, provider: 'google', secret: 'gemini-provider-secret-value' };

function translator(clientWantsUsage = false) {
  const meta = newStreamMeta();
  return { meta, t: new GeminiStreamTranslator(meta, { ...ctx, clientWantsUsage }) };
}

const event = (parts: unknown[] | null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...(parts === null ? {} : { candidates: [{ content: { role: 'model', parts }, index: 0, ...(extra.finishReason ? { finishReason: extra.finishReason } : {}) }] }), ...(extra.usageMetadata ? { usageMetadata: extra.usageMetadata } : {}) });

/** The chunks one event becomes, and those the end adds (the translator appends to an array it is given). */
function pushed(t: GeminiStreamTranslator, data: string): string[] {
  const out: string[] = [];
  t.push(data, out);
  return out;
}

function ended(t: GeminiStreamTranslator): string[] {
  const out: string[] = [];
  t.end(out);
  return out;
}

const parse = (chunks: string[]) => chunks.map((c) => JSON.parse(c) as { choices: { delta: Record<string, unknown>; finish_reason: string | null }[]; usage?: unknown });

describe('stream translation', () => {
  it('puts the role on the first chunk only, skips thought summaries, and finishes once', () => {
    const { meta, t } = translator();
    const chunks = parse([
      ...pushed(t, event([{ text: 'thinking…', thought: true }])),
      ...pushed(t, event([{ text: 'Hel' }])),
      ...pushed(t, event([{ text: 'lo' }], { finishReason: 'STOP', usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 4, totalTokenCount: 11 } })),
      ...ended(t),
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Hel' }, { content: 'lo' }, {}]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, 'stop']);
    expect(meta).toMatchObject({ finishReason: 'stop', usage: { input: 5, output: 6, cached: 0 }, failed: false });
    expect(meta.estimatedOutput).toBeGreaterThan(0);
  });

  it('takes usage from the last usageMetadata, sends it last only when asked, totals consistent', () => {
    const run = (wants: boolean) => {
      const { meta, t } = translator(wants);
      const out = [
        ...pushed(t, event([{ text: 'a' }], { usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } })),
        ...pushed(t, event([{ text: 'b' }], { finishReason: 'STOP', usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 2, cachedContentTokenCount: 4, totalTokenCount: 9 } })),
        // Usage alone after the finish still counts; any content there would not be sent.
        ...pushed(t, event([{ text: 'late' }], { usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 10 } })),
        ...ended(t),
      ];
      return { meta, chunks: parse(out) };
    };
    const quiet = run(false);
    expect(quiet.chunks.some((c) => c.usage !== undefined)).toBe(false);
    expect(quiet.chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('ab');
    expect(quiet.meta.usage).toEqual({ input: 7, output: 3, cached: 4 });
    const asked = run(true);
    expect(asked.chunks.at(-1)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'gw-model',
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it('opens a stream that starts with a call with content null and numbers calls on from the conversation', () => {
    const meta = newStreamMeta();
    const t = new GeminiStreamTranslator(meta, { ...ctx, firstCall: 3, clientWantsUsage: false });
    const chunks = parse([...pushed(t, event([{ functionCall: { name: 'f', args: { a: 1 } } }], { finishReason: 'STOP' })), ...ended(t)]);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_3', type: 'function', function: { name: 'f', arguments: '' } }] });
    expect(chunks[1]?.choices[0]?.delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] });
    expect(chunks[2]?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(meta.finishReason).toBe('tool_calls');
  });

  it('maps MAX_TOKENS to length and keeps an unknown reason raw', () => {
    const length = translator();
    expect(parse(pushed(length.t, event([{ text: 'x' }], { finishReason: 'MAX_TOKENS' }))).at(-1)?.choices[0]?.finish_reason).toBe('length');
    expect(length.meta.finishReason).toBe('max_tokens');
    const odd = translator();
    expect(parse(pushed(odd.t, event([], { finishReason: 'SOMETHING_NEW' }))).at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(odd.meta).toMatchObject({ finishReason: 'stop', rawFinishReason: 'SOMETHING_NEW' });
  });

  it('fails with UPSTREAM_ERROR on an error event, scrubbing keys from its message', () => {
    const { meta, t } = translator();
    pushed(t, event([{ text: 'a' }]));
    let caught: unknown;
    try {
      // After a chunk went out, whatever the error's code: the answer failed mid-way.
      pushed(t, JSON.stringify({ error: { code: 503, status: 'INTERNAL', message: `Internal error for key ${ctx.secret} and AIzaSyA1234567890abcdefghijklmnopqrstuv` } }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).code).toBe('UPSTREAM_ERROR');
    expect((caught as GatewayError).retryable).toBe(false);
    expect((caught as GatewayError).message).toContain('Internal error');
    expect((caught as GatewayError).message).not.toContain(ctx.secret);
    expect((caught as GatewayError).message).not.toContain('AIzaSy');
    expect(meta.failed).toBe(true);
  });

  it('fails an error event that comes before any chunk as the status it carries', () => {
    const { meta, t } = translator();
    let caught: unknown;
    try {
      pushed(t, JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota' } }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(meta.failed).toBe(true);
  });

  it('fails when the stream ends before a finish reason, or sends something that is not JSON', () => {
    const { t } = translator();
    pushed(t, event([{ text: 'a' }]));
    expect(() => ended(t)).toThrow(/before it was complete/);
    expect(() => pushed(translator().t, '<html>')).toThrow(/not JSON/);
  });
});

describe('whole answers', () => {
  it('gives an empty message, not null, when the answer has no text and no call', () => {
    const answer = toChatCompletion({ candidates: [{ finishReason: 'SAFETY', index: 0 }] }, ctx, 'google');
    expect(answer.body.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
    expect(answer.finish.gateway).toBe('content_filter');
  });

  it('refuses an answer with neither candidates nor a block reason', () => {
    expect(() => toChatCompletion({ usageMetadata: { promptTokenCount: 1 } }, ctx, 'google')).toThrow(GatewayError);
  });
});
