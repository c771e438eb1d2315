import { describe, expect, it } from 'vitest';
import { Errors, GatewayError, type AuditOutcome } from '@gateway/shared';
import type { RequestContext } from './context.js';
import type { Endpoint, Step } from './endpoint.js';
import { buildEndpoints } from './endpoints.js';
import { PAUSE, run } from './run.js';

/** The parts of a request context the runner touches, recording what happened to it. */
function context(steps: Step[]) {
  const seen: string[] = [];
  const ctx = {
    step: 0,
    finished: false,
    chain: { steps } as unknown as Endpoint,
    failed: null as null | { code: string; outcome: AuditOutcome },
    crashedWith: null as unknown,
    run(from = 0) {
      run(ctx as unknown as RequestContext, from);
    },
    fail(err: GatewayError, outcome: AuditOutcome) {
      ctx.failed = { code: err.code, outcome };
      ctx.finished = true;
    },
    crashed(err: unknown) {
      ctx.crashedWith = err;
      ctx.finished = true;
    },
  };
  return { ctx, seen };
}

describe('run', () => {
  it('runs steps that do not wait in the same tick, with no promise made', () => {
    const order: string[] = [];
    const { ctx } = context([() => void order.push('a'), () => void order.push('b'), () => void order.push('c')]);
    const made = Promise.prototype.then;
    let promises = 0;
    Promise.prototype.then = function (this: Promise<unknown>, ...args: unknown[]) {
      promises++;
      return made.apply(this, args as Parameters<typeof made>);
    } as typeof made;
    try {
      ctx.run();
    } finally {
      Promise.prototype.then = made;
    }
    expect(order).toEqual(['a', 'b', 'c']);
    expect(promises).toBe(0);
  });

  it('waits only for a step that returns a promise, then goes on in order', async () => {
    const order: string[] = [];
    let release!: () => void;
    const waited = new Promise<void>((resolve) => (release = resolve));
    const { ctx } = context([() => void order.push('a'), () => waited.then(() => void order.push('b')), () => void order.push('c')]);
    ctx.run();
    expect(order).toEqual(['a']);
    release();
    await waited;
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('stops at PAUSE until the step resumes the chain itself', () => {
    const order: string[] = [];
    let resume!: () => void;
    const { ctx } = context([
      (c) => {
        const next = c.step + 1;
        resume = () => c.run(next);
        return PAUSE;
      },
      () => void order.push('after'),
    ]);
    ctx.run();
    expect(order).toEqual([]);
    resume();
    expect(order).toEqual(['after']);
  });

  it('ends the chain once a step answers, and answers a thrown GatewayError as the request’s fault', () => {
    const order: string[] = [];
    const { ctx } = context([
      () => {
        throw Errors.modelNotFound('x');
      },
      () => void order.push('never'),
    ]);
    ctx.run();
    expect(ctx.failed).toEqual({ code: 'MODEL_NOT_FOUND', outcome: 'error' });
    expect(order).toEqual([]);
  });

  it('hands anything else thrown, or a rejected wait, to crashed', async () => {
    const bug = new TypeError('a bug');
    const thrown = context([
      () => {
        throw bug;
      },
    ]).ctx;
    thrown.run();
    expect(thrown.crashedWith).toBe(bug);
    const rejected = context([() => Promise.reject(bug)]).ctx;
    rejected.run();
    await expect.poll(() => rejected.crashedWith).toBe(bug);
  });
});

describe('buildEndpoints', () => {
  it('leaves an unused seam out of the chain entirely, and puts a used one at its point', () => {
    const bare = buildEndpoints();
    const { batches, lines, ...models } = bare;
    const linePasses = [...Object.values(lines.gateway), ...Object.values(lines.handOff), ...Object.values(lines.collect)];
    for (const endpoint of [...Object.values(models), ...Object.values(batches), ...linePasses]) expect(endpoint.steps.every((step: Step) => typeof step === 'function')).toBe(true);
    const marks: Record<string, Step> = {};
    for (const name of ['tags', 'cacheLookup', 'guardrailsIn', 'budgets', 'guardrailsOut']) marks[name] = Object.defineProperty(() => undefined, 'name', { value: name });
    const cacheStore = () => undefined;
    const full = buildEndpoints({ ...marks, cacheStore });
    const chat = full.chatCompletions.steps.map((s) => s.name);
    expect(full.chatCompletions.steps.length).toBe(bare.chatCompletions.steps.length + 5);
    // parse → tags → cache lookup → guardrails in → admission → budgets → provider → guardrails out → respond
    expect(chat.indexOf('tags')).toBeGreaterThan(chat.indexOf('checkKey'));
    expect(chat.slice(chat.indexOf('tags'), chat.indexOf('tags') + 4)).toEqual(['tags', 'cacheLookup', 'guardrailsIn', 'projectPolicy']);
    expect(chat[chat.indexOf('quota') + 1]).toBe('budgets');
    expect(chat[chat.indexOf('callModel') + 1]).toBe('guardrailsOut');
    expect(full.chatCompletions.closing[0]).toBe(cacheStore);
    expect(bare.chatCompletions.closing).toHaveLength(full.chatCompletions.closing.length - 1);
  });

  it("makes a provider-run batch line's two passes: admitted then handed off, and collected with nothing able to refuse it", () => {
    const marks: Record<string, Step> = {};
    for (const name of ['cacheRecall', 'tags', 'cacheLookup', 'guardrailsIn', 'budgets', 'guardrailsOut', 'cacheCollect']) marks[name] = Object.defineProperty(() => undefined, 'name', { value: name });
    const cacheStore = Object.defineProperty(() => undefined, 'name', { value: 'cacheStore' });
    const { lines } = buildEndpoints({ ...marks, cacheStore });
    const handOff = lines.handOff['/v1/chat/completions'].steps.map((s) => s.name);
    expect(handOff).toEqual(lines.gateway['/v1/chat/completions'].steps.map((s) => (s.name === 'callModel' ? 'handOffOrCall' : s.name)));
    // The hand-off pass looks the cache up, so it stores too (and ends a single flight it began).
    expect(lines.handOff['/v1/chat/completions'].closing.map((s) => s.name)).toEqual(['cacheStore', 'settle', 'recordsUnlessHandedOff', 'endTrace']);
    const collect = lines.collect['/v1/messages'].steps.map((s) => s.name);
    for (const gone of ['cacheRecall', 'cacheLookup', 'guardrailsIn', 'rateLimit', 'quota', 'budgets', 'callModel', 'cacheCollect']) expect(collect).not.toContain(gone);
    expect(collect.slice(collect.indexOf('prepaidCharges'), collect.indexOf('prepaidCharges') + 3)).toEqual(['prepaidCharges', 'callCollected', 'guardrailsOut']);
    expect(lines.collect['/v1/messages'].closing.map((s) => s.name)).toEqual(['settleCollected', 'settle', 'countRequest', 'writeRecords', 'endTrace']);
    // Embeddings lines are the gateway's to run, whoever serves them.
    expect(lines.collect['/v1/embeddings']).toBe(lines.gateway['/v1/embeddings']);
  });
});
