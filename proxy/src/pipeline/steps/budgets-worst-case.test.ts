import { describe, expect, it } from 'vitest';
import type { BudgetRule, ModelEntry, ProjectPolicy } from '@gateway/shared';
import { GatewayError } from '@gateway/shared';
import { budgets } from './budgets.js';
import { estimateChat, maxTokensCap } from './admission.js';
import { openAiChat } from '../../protocols/openai-chat/openai-chat.js';
import { estimatePromptTokens } from '../../policy/token-estimate.js';
import type { RequestContext } from '../context.js';
import type { Route } from '../../routing/model-router.js';

/**
 * The worst case a request reserves in its budgets, against docs/budgets.md's formula:
 *   estimated prompt tokens × input price + maximum output × output price (prices per 1M tokens),
 *   maximum output = max(max_tokens, max_completion_tokens) × n, else the model's max_output_tokens
 *   (16,384 when the providers file gives none) × n.
 * The body goes through the steps that run before `budgets` in a chat request (parse, the caps,
 * the estimate), so what is checked is what the pipeline reserves.
 */

const budget: BudgetRule = {
  id: 'b1',
  scope: 'project',
  key_id: null,
  tag: null,
  limit_usd: 25,
  period: 'month',
  timezone: 'UTC',
  alert_at: [],
  created_at: 0,
};

const MESSAGES = [{ role: 'user', content: 'Summarise the quarterly figures for the search team, in three bullet points.' }];

function entry(price: { input: number; output: number } | null, maxOutput?: number): ModelEntry {
  const out: ModelEntry = { id: 'gpt-4o-mini', upstream: 'gpt-4o-mini', price: price === null ? null : { ...price, cached_input: price.input, cache_write: price.input } };
  if (maxOutput !== undefined) out.max_output_tokens = maxOutput;
  return out;
}

function routeOf(...entries: ModelEntry[]): Route {
  return { id: 'gpt-4o-mini', targets: entries.map((e) => ({ entry: e })) } as unknown as Route;
}

const GPT_4O_MINI = routeOf(entry({ input: 0.15, output: 0.6 }));

/** The nano-dollars `budgets` asks the leases to reserve for this body, or the error it failed with. */
function reserved(body: Record<string, unknown>, route: Route = GPT_4O_MINI, policy: Partial<ProjectPolicy> = {}): number {
  const amounts: number[] = [];
  const failures: GatewayError[] = [];
  const raw = Buffer.from(JSON.stringify(body));
  const ctx: RequestContext = {
    policy: { max_tokens_cap: null, budgets: [budget], ...policy },
    parsed: openAiChat.parse(JSON.parse(raw.toString()), raw),
    route,
    model: 'gpt-4o-mini',
    keyId: 'k1',
    projectId: 'p1',
    extras: null,
    estimate: 0,
    forward: raw,
    finished: false,
    budgetHold: null,
    fail(err: GatewayError) {
      failures.push(err);
      ctx.finished = true;
    },
    deps: {
      defaultReservation: 4096,
      budgets: {
        reserve(_project: string, _rules: readonly BudgetRule[], amount: number) {
          amounts.push(amount);
          return { parts: [], settled: false };
        },
        settle() {},
      },
    },
  } as unknown as RequestContext;
  maxTokensCap(ctx);
  if (!ctx.finished) estimateChat(ctx);
  if (!ctx.finished) void budgets(ctx);
  if (failures.length > 0) throw failures[0];
  expect(amounts).toHaveLength(1);
  return amounts[0]!;
}

/** docs/budgets.md's worst case in US dollars. */
function worstCaseUsd(promptTokens: number, maxOutput: number, price: { input: number; output: number }): number {
  return (promptTokens * price.input) / 1e6 + (maxOutput * price.output) / 1e6;
}

/** Reserved in whole nano-dollars, never below the dollar amount: at most one nano-dollar above it. */
function expectReserved(nanos: number, usd: number): void {
  expect(Number.isInteger(nanos)).toBe(true);
  expect(nanos).toBeGreaterThanOrEqual(Math.floor(usd * 1e9 - 1e-6));
  expect(nanos - usd * 1e9).toBeLessThan(1 + 1e-6);
}

const prompt = estimatePromptTokens({ model: 'gpt-4o-mini', messages: MESSAGES } as never);
const PRICE = { input: 0.15, output: 0.6 };

describe('the worst case a request reserves in its budgets (docs/budgets.md)', () => {
  it('is prompt × input price + max_tokens × output price', () => {
    expect(prompt).toBeGreaterThan(0);
    const nanos = reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 500 });
    expectReserved(nanos, worstCaseUsd(prompt, 500, PRICE));
  });

  it('counts max_completion_tokens alone as max_tokens', () => {
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_completion_tokens: 700 }), worstCaseUsd(prompt, 700, PRICE));
  });

  it('counts the larger of max_tokens and max_completion_tokens when both are sent, whichever it is', () => {
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 300, max_completion_tokens: 900 }), worstCaseUsd(prompt, 900, PRICE));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 900, max_completion_tokens: 300 }), worstCaseUsd(prompt, 900, PRICE));
  });

  it('multiplies the output by n', () => {
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 500, n: 3 }), worstCaseUsd(prompt, 500 * 3, PRICE));
    // Both limits and n: the larger limit × n.
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 200, max_completion_tokens: 400, n: 3 }), worstCaseUsd(prompt, 400 * 3, PRICE));
  });

  it("takes the model's max_output_tokens × n when the request sets no limit, 16,384 when the providers file gives none", () => {
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES }), worstCaseUsd(prompt, 16_384, PRICE));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, n: 3 }), worstCaseUsd(prompt, 16_384 * 3, PRICE));
    const capped = routeOf(entry(PRICE, 4096));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES }, capped), worstCaseUsd(prompt, 4096, PRICE));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, n: 3 }, capped), worstCaseUsd(prompt, 4096 * 3, PRICE));
  });

  it("matches the worked example's figures: $0.00078 with max_tokens 500 and n 2, ≈ $0.0198 without a limit, for 1,200 prompt tokens", () => {
    expect(worstCaseUsd(1200, 500 * 2, PRICE)).toBeCloseTo(0.00078, 12);
    expect(worstCaseUsd(1200, 16_384 * 2, PRICE)).toBeCloseTo(0.0198, 4);
    expect(worstCaseUsd(1200, 200, PRICE)).toBeCloseTo(0.0003, 12);
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 500, n: 2 }), worstCaseUsd(prompt, 1000, PRICE));
  });

  it('takes the highest prices and max_output_tokens among the providers of a failover route', () => {
    // Each highest figure from a different provider, none of them the last.
    const route = routeOf(entry({ input: 0.5, output: 0.3 }, 2048), entry({ input: 0.1, output: 1.2 }, 4096), entry({ input: 0.15, output: 0.6 }, 8192), entry({ input: 0.12, output: 0.2 }, 1024));
    const highest = { input: 0.5, output: 1.2 };
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES }, route), worstCaseUsd(prompt, 8192, highest));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 100, n: 2 }, route), worstCaseUsd(prompt, 200, highest));
  });

  it('prices the prompt at the cache-write price where that is above the input price', () => {
    // Anthropic's prices: a prompt written to the cache costs 3.75 a million tokens, not 3.
    const claude: ModelEntry = { id: 'gpt-4o-mini', upstream: 'claude', price: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } };
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 100 }, routeOf(claude)), worstCaseUsd(prompt, 100, { input: 3.75, output: 15 }));
  });

  it("reserves the limit a project's max_tokens_cap gives a request that sets none (cap / n, × n)", () => {
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES }, GPT_4O_MINI, { max_tokens_cap: 1000 }), worstCaseUsd(prompt, 1000, PRICE));
    expectReserved(reserved({ model: 'gpt-4o-mini', messages: MESSAGES, n: 3 }, GPT_4O_MINI, { max_tokens_cap: 1000 }), worstCaseUsd(prompt, 333 * 3, PRICE));
  });

  it('refuses a model without a price to a project with a budget: 403 MODEL_NOT_PRICED', () => {
    let err: unknown = null;
    try {
      reserved({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 10 }, routeOf(entry(PRICE), entry(null)));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('MODEL_NOT_PRICED');
    expect((err as GatewayError).status).toBe(403);
  });
});
