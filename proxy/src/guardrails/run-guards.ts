import type { GuardrailDecision } from '@gateway/shared';
import type { Masker } from '@gateway/shared/guardrails';
import { extrasOf, type RequestExtras } from '../pipeline/request-extras.js';
import { callModeration, callWebhook, type RemoteVerdict } from './remote.js';
import type { Guard, GuardrailRuntime } from './runtime.js';

/** One text of the prompt or answer, readable and replaceable in place. */
export interface Slot {
  text: string;
  set(value: string): void;
}

/** How the checks ended: passed (masks applied), blocked by a guardrail, or one could not check. */
export type GuardOutcome = null | { kind: 'block'; id: string; reason: string | null } | { kind: 'unavailable'; id: string };

/** What guards run for: a model request (its context) or an MCP tool call; decisions go to its audit event. */
export interface GuardSubject {
  readonly projectId: string;
  readonly keyId: string;
  readonly model: string | null;
  extras: RequestExtras | null;
}

/** The decision in the request's audit event and the guardrail's counter. */
export function decide(ctx: GuardSubject, runtime: GuardrailRuntime, decision: GuardrailDecision): void {
  const list = (extrasOf(ctx).guardrails ??= []);
  if (list.some((d) => d.id === decision.id && d.stage === decision.stage && d.action === decision.action)) return;
  list.push(decision);
  runtime.count(decision);
}

/**
 * Runs `guards` in order over `slots`: synchronously while they are the gateway's own (regex,
 * pii), waiting only at a remote one (webhook, moderation). Masks change the slots as they go, so
 * a later guard sees the masked text.
 */
export function runGuards(ctx: GuardSubject, runtime: GuardrailRuntime, guards: readonly Guard[], slots: readonly Slot[], stage: 'input' | 'output', masker: Masker, from = 0): GuardOutcome | Promise<GuardOutcome> {
  for (let i = from; i < guards.length; i++) {
    const { g, detect } = guards[i]!;
    if (detect === null) return remote(ctx, runtime, guards, slots, stage, masker, i);
    let hit = false;
    for (const slot of slots) {
      const spans = detect(slot.text);
      if (spans.length === 0) continue;
      hit = true;
      if (g.action === 'block') break;
      if (g.action === 'mask') slot.set(masker.apply(slot.text, spans));
    }
    if (!hit) continue;
    decide(ctx, runtime, { id: g.id, stage, action: g.action });
    if (g.action === 'block') return { kind: 'block', id: g.id, reason: null };
  }
  return null;
}

async function remote(ctx: GuardSubject, runtime: GuardrailRuntime, guards: readonly Guard[], slots: readonly Slot[], stage: 'input' | 'output', masker: Masker, i: number): Promise<GuardOutcome> {
  const g = guards[i]!.g;
  const facts = { stage, texts: slots.map((s) => s.text), projectId: ctx.projectId, keyId: ctx.keyId, model: ctx.model ?? '' };
  let verdict: RemoteVerdict;
  if (g.type === 'webhook') verdict = await callWebhook(g, facts, runtime.webhooks);
  else if (g.type === 'moderation') verdict = await callModeration(g, facts, runtime);
  else verdict = { action: 'allow' };
  if (verdict.action === 'failed') {
    if (g.type === 'webhook' && g.failure_mode === 'open') decide(ctx, runtime, { id: g.id, stage, action: 'flag', failed: true });
    else return { kind: 'unavailable', id: g.id };
  } else if (verdict.action === 'block') {
    const action = g.action === 'flag' ? 'flag' : 'block';
    decide(ctx, runtime, { id: g.id, stage, action });
    if (action === 'block') return { kind: 'block', id: g.id, reason: verdict.reason };
  } else if (verdict.action === 'mask') {
    verdict.texts.forEach((text, n) => slots[n]!.set(text));
    decide(ctx, runtime, { id: g.id, stage, action: 'mask' });
  }
  return runGuards(ctx, runtime, guards, slots, stage, masker, i + 1);
}
