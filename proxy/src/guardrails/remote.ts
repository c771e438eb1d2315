import { newEventId, sign, type ModerationGuardrail, type WebhookGuardrail } from '@gateway/shared';
import type { GuardrailRuntime } from './runtime.js';

/** What a remote guard answered: let through, block (with a reason) or replace the texts. */
export type RemoteVerdict = { action: 'allow' } | { action: 'block'; reason: string | null } | { action: 'mask'; texts: string[] } | { action: 'failed' };

export interface RemoteFacts {
  stage: 'input' | 'output';
  texts: string[];
  projectId: string;
  keyId: string;
  model: string;
}

/**
 * The team's own service, called as Standard Webhooks (webhook-id, webhook-timestamp,
 * webhook-signature over `{id}.{timestamp}.{body}`). Anything but a 2xx with a readable answer
 * in time is `failed`, which the guardrail's failure_mode decides.
 */
export async function callWebhook(g: WebhookGuardrail, facts: RemoteFacts): Promise<RemoteVerdict> {
  const body = JSON.stringify({ stage: facts.stage, texts: facts.texts, project_id: facts.projectId, key_id: facts.keyId, model: facts.model });
  const id = newEventId();
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const res = await fetch(g.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(g.secret, id, timestamp, body) },
      body,
      signal: AbortSignal.timeout(g.timeout_ms),
      redirect: 'error',
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { action: 'failed' };
    }
    const answer = (await res.json()) as { action?: unknown; texts?: unknown; reason?: unknown };
    if (answer.action === 'allow') return { action: 'allow' };
    if (answer.action === 'block') return { action: 'block', reason: typeof answer.reason === 'string' ? answer.reason.slice(0, 500) : null };
    if (answer.action === 'mask' && Array.isArray(answer.texts) && answer.texts.length === facts.texts.length && answer.texts.every((t) => typeof t === 'string')) {
      return { action: 'mask', texts: answer.texts as string[] };
    }
    return { action: 'failed' };
  } catch {
    return { action: 'failed' };
  }
}

/**
 * OpenAI's `/v1/moderations` at a provider of the providers file: caught when a category's score
 * reaches its threshold, or (for categories without one) when the provider flags the text.
 */
export async function callModeration(g: ModerationGuardrail, facts: RemoteFacts, runtime: GuardrailRuntime): Promise<RemoteVerdict> {
  const target = runtime.moderationTarget(g.provider);
  if (target === null) return { action: 'failed' };
  try {
    const res = await fetch(`${target.baseUrl}/moderations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(target.apiKey === null ? {} : { authorization: `Bearer ${target.apiKey}` }) },
      body: JSON.stringify({ input: facts.texts, ...(g.model === undefined ? {} : { model: g.model }) }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { action: 'failed' };
    }
    const answer = (await res.json()) as { results?: { flagged?: boolean; categories?: Record<string, boolean>; category_scores?: Record<string, number> }[] };
    const thresholds = g.thresholds ?? {};
    for (const result of answer.results ?? []) {
      for (const [category, score] of Object.entries(result.category_scores ?? {})) {
        const threshold = thresholds[category];
        if (threshold !== undefined ? score >= threshold : result.categories?.[category] === true) return { action: 'block', reason: category };
      }
      if (Object.keys(thresholds).length === 0 && result.flagged === true) return { action: 'block', reason: null };
    }
    return { action: 'allow' };
  } catch {
    return { action: 'failed' };
  }
}
