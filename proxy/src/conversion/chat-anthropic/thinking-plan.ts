import type { ChatCompletionBody } from '../../request/openai-chat.js';
import { thinkingOf } from '../../request/thinking-blocks.js';
import { invalid, isObject, present } from '../json-fields.js';

/**
 * `reasoning_effort` as Anthropic's extended thinking: `thinking: {type: "enabled", budget_tokens}`,
 * the budget by effort (the ranges the Messages translation reads back as the same effort,
 * messages-to-chat.ts). OpenAI's token limit counts reasoning, as Anthropic's `max_tokens` counts
 * thinking: a client's limit stays the limit and the budget fits under it; without one, the answer
 * keeps the provider entry's default room and the budget is added to it.
 *
 * Thinking is left off, and `reasoning_effort` named as dropped, where Anthropic would refuse it:
 * a tool choice that forces a tool, a limit with no room for the smallest budget (1,024 tokens),
 * and a tool loop whose last assistant turn comes without the thinking blocks Anthropic signed for
 * it (a chat client that does not send them back; a Responses client replays them as reasoning
 * items). With thinking on, a temperature other than 1 and a top_p under 0.95 are dropped, since
 * Anthropic takes neither then.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768 };

const MIN_BUDGET = 1024;
const MIN_TOP_P = 0.95;

export type ThinkingPlan = { on: true; budget: number; maxTokens: number; dropped: readonly string[] } | { on: false; dropped: readonly string[] };

const OFF: ThinkingPlan = { on: false, dropped: [] };
const LEFT_OFF: ThinkingPlan = { on: false, dropped: ['reasoning_effort'] };

export function thinkingPlan(body: Readonly<ChatCompletionBody>, defaultMaxTokens: number): ThinkingPlan {
  const effort = body.reasoning_effort;
  if (!present(effort) || effort === 'none') return OFF;
  const budget = typeof effort === 'string' && Object.hasOwn(THINKING_BUDGETS, effort) ? (THINKING_BUDGETS[effort] as number) : null;
  if (budget === null) throw invalid('reasoning_effort', '`reasoning_effort` must be none, minimal, low, medium, high or xhigh.');
  if (forcesTool(body.tool_choice) || loopWithoutThinking(body)) return LEFT_OFF;
  const limit = body.max_completion_tokens ?? body.max_tokens;
  let plan: { budget: number; maxTokens: number };
  if (typeof limit === 'number') {
    if (limit <= MIN_BUDGET) return LEFT_OFF;
    plan = { budget: Math.min(budget, limit - 1), maxTokens: limit };
  } else plan = { budget, maxTokens: defaultMaxTokens + budget };
  const dropped: string[] = [];
  if (typeof body.temperature === 'number' && body.temperature !== 1) dropped.push('temperature');
  if (typeof body.top_p === 'number' && body.top_p < MIN_TOP_P) dropped.push('top_p');
  return { on: true, ...plan, dropped };
}

/**
 * What the plan leaves out of this body, for a provider's param table (ParamTable.dropsOf). An effort
 * with no budget is the translation's refusal, found when the request is written: nothing here.
 */
export function thinkingDrops(body: Readonly<ChatCompletionBody>): readonly string[] {
  try {
    return thinkingPlan(body, 1).dropped;
  } catch {
    return [];
  }
}

function forcesTool(choice: unknown): boolean {
  return choice === 'required' || (isObject(choice) && choice.type === 'function');
}

/** The conversation's last assistant turn called tools and has no thinking blocks to go back with. */
function loopWithoutThinking(body: Readonly<ChatCompletionBody>): boolean {
  const messages = body.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    return Array.isArray(message.tool_calls) && message.tool_calls.length > 0 && thinkingOf(message) === null;
  }
  return false;
}
