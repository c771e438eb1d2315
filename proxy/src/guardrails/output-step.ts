import { Errors } from '@gateway/shared';
import { Masker } from '@gateway/shared/guardrails';
import type { RequestContext } from '../pipeline/context.js';
import type { CompletionResult, StreamResult } from '../request/internal-request.js';
import { runGuards, type GuardOutcome } from './run-guards.js';
import type { GuardrailRuntime } from './runtime.js';
import { answerSlots } from './slots.js';
import { guardStream } from './stream-guard.js';
import { jsonBytes } from '../request/json-bytes.js';

/**
 * guardrails (output): the answer checked before respond. A whole answer is read, checked and
 * rewritten (block → content, reasoning and tool calls withheld, `finish_reason: "content_filter"`),
 * every choice's texts read apart. The provider's thinking blocks hold the reasoning's text
 * unmasked (and a provider takes them back only unchanged), so a mask of the reasoning withholds
 * them: the client sees the masked text, and its next turn goes without thinking. A stream is wrapped (stream-guard.ts); the wrapped stream is the one
 * respond (and anything after it) consumes.
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
  let answer: { choices?: { finish_reason?: string | null; message?: { content?: string | null; tool_calls?: unknown; reasoning_content?: unknown; thinking_blocks?: unknown } }[] };
  try {
    answer = JSON.parse(result.body.toString('utf8'));
  } catch {
    return;
  }
  const slots = answerSlots(answer);
  const before = slots.map((s) => s.text);
  const reasoningBefore = new Map((answer.choices ?? []).map((choice) => [choice, choice.message?.reasoning_content]));
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
          delete choice.message.reasoning_content;
          delete choice.message.thinking_blocks;
        }
        choice.finish_reason = 'content_filter';
      }
      result.finishReason = 'content_filter';
    } else {
      if (!slots.some((s, i) => s.text !== before[i])) return;
      for (const choice of answer.choices ?? []) {
        const message = choice.message;
        if (message !== undefined && message.reasoning_content !== reasoningBefore.get(choice)) delete message.thinking_blocks;
      }
    }
    result.body = jsonBytes(answer);
  };
  if (outcome instanceof Promise) return outcome.then(settle);
  settle(outcome);
}
