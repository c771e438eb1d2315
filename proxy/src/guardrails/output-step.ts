import { Errors } from '@gateway/shared';
import { Masker } from '@gateway/shared/guardrails';
import type { RequestContext } from '../pipeline/context.js';
import type { CompletionResult, StreamResult } from '../request/internal-request.js';
import { decide, runGuards, type GuardOutcome, type Slot } from './run-guards.js';
import type { CompiledGuards, GuardrailRuntime } from './runtime.js';
import { answerSlots } from './slots.js';

/**
 * guardrails (output): the answer checked before respond. A whole answer is read, checked and
 * rewritten (block → content withheld, `finish_reason: "content_filter"`). A stream is wrapped:
 * text is released only once `window` characters follow it, so a match up to the window's length
 * split across chunks is seen whole before any of it leaves; a clean stream's chunks pass as they
 * came. The wrapped stream is the one respond (and anything after it) consumes.
 */
export function guardrailsOut(ctx: RequestContext): void | Promise<void> {
  const guardrails = ctx.policy?.guardrails;
  if (guardrails === undefined || guardrails === null) return;
  const runtime = ctx.deps.guardrails as GuardrailRuntime;
  const compiled = runtime.compiledFor(ctx.policy!, guardrails);
  if (compiled.output.length === 0) return;
  const result = ctx.result as CompletionResult | StreamResult;
  if (result.native === true) return;
  if ('events' in result) {
    // The provider's events are taken now: the generator starts later, once respond reads it.
    result.events = guardStream(ctx, runtime, compiled, result, result.events);
    return;
  }
  let answer: { choices?: { finish_reason?: string | null; message?: { content?: string | null; tool_calls?: unknown } }[] };
  try {
    answer = JSON.parse(result.body.toString('utf8'));
  } catch {
    return;
  }
  const slots = answerSlots(answer);
  const before = slots.map((s) => s.text);
  const outcome = runGuards(ctx, runtime, compiled.output, slots, 'output', new Masker());
  const settle = (done: GuardOutcome): void => {
    if (done?.kind === 'unavailable') return ctx.fail(Errors.guardrailUnavailable(done.id), 'error', ctx.chain.meter!(ctx, 'error', result.usage));
    if (done?.kind === 'block') {
      for (const choice of answer.choices ?? []) {
        if (choice.message !== undefined) {
          choice.message.content = '';
          // The calls' arguments are withheld with the text: a client that declared a tool must
          // not get through it what the answer's text may not carry.
          delete choice.message.tool_calls;
        }
        choice.finish_reason = 'content_filter';
      }
      result.finishReason = 'content_filter';
    } else if (!slots.some((s, i) => s.text !== before[i])) return;
    result.body = Buffer.from(JSON.stringify(answer));
  };
  if (outcome instanceof Promise) return outcome.then(settle);
  settle(outcome);
}

interface Held {
  data: string;
  chunk: { choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[] } | null;
  text: string;
}

function chunkText(chunk: Held['chunk']): string {
  let text = '';
  for (const choice of chunk?.choices ?? []) if (typeof choice.delta?.content === 'string') text += choice.delta.content;
  return text;
}

async function* guardStream(ctx: RequestContext, runtime: GuardrailRuntime, compiled: CompiledGuards, result: StreamResult, source: AsyncIterable<string>): AsyncGenerator<string> {
  const held: Held[] = [];
  let heldText = '';
  // The end of what was released, as long as the window: a match reaching into it started there.
  let releasedTail = '';
  let last: Held['chunk'] = null;
  const masker = new Masker();
  const window = compiled.window;

  /** Checks the held text (with the released tail before it); false when the stream is blocked. */
  const check = async (): Promise<boolean> => {
    const slot: Slot = {
      text: releasedTail + heldText,
      set(value) {
        slot.text = value;
      },
    };
    const whole = slot.text;
    let outcome = runGuards(ctx, runtime, compiled.output, [slot], 'output', masker);
    if (outcome instanceof Promise) outcome = await outcome;
    if (outcome?.kind === 'unavailable') throw Errors.guardrailUnavailable(outcome.id);
    if (outcome?.kind === 'block') return false;
    if (slot.text !== whole && slot.text.startsWith(releasedTail)) {
      // Masked: the held text, masked, travels in the first held chunk that carries text.
      const masked = slot.text.slice(releasedTail.length);
      let first = true;
      for (const h of held) {
        if (h.text === '' || h.chunk === null) continue;
        for (const choice of h.chunk.choices ?? []) if (choice.delta !== undefined && typeof choice.delta.content === 'string') choice.delta.content = first ? masked : '';
        h.text = first ? masked : '';
        h.data = JSON.stringify(h.chunk);
        first = false;
      }
      heldText = masked;
    }
    return true;
  };

  const blocked = function* (): Generator<string> {
    result.meta.finishReason = 'content_filter';
    const base = last as (Record<string, unknown> & { choices?: unknown }) | null;
    yield JSON.stringify({ ...(base ?? {}), choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }], usage: undefined });
  };

  for await (const data of source) {
    let chunk: Held['chunk'] = null;
    try {
      chunk = JSON.parse(data);
    } catch {
      chunk = null;
    }
    if (chunk !== null) last = chunk;
    const text = chunkText(chunk);
    if (text === '' && held.length === 0) {
      yield data;
      continue;
    }
    held.push({ data, chunk, text });
    heldText += text;
    // With a remote guard the whole stream is held and checked once, at its end: a webhook or
    // moderation call per chunk would ask the same question again with every chunk.
    if (text === '' || window === Infinity) continue;
    if (!(await check())) {
      yield* blocked();
      return;
    }
    while (held.length > 0 && heldText.length - held[0]!.text.length >= window) {
      const h = held.shift()!;
      heldText = heldText.slice(h.text.length);
      releasedTail = (releasedTail + h.text).slice(-Math.min(window, 1 << 16));
      yield h.data;
    }
  }
  if (window === Infinity && heldText !== '' && !(await check())) {
    yield* blocked();
    return;
  }
  for (const h of held) yield h.data;
}

