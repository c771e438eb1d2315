import { newEventId, sign, type ModerationGuardrail, type WebhookGuardrail } from '@gateway/shared';
import { request } from 'undici';
import type { GuardrailRuntime } from './runtime.js';
import type { WebhookAgent } from './webhook-agent.js';

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
 * webhook-signature over `{id}.{timestamp}.{body}`) through the proxy's webhook agent, which
 * connects only to public addresses unless told otherwise (webhook-agent.ts). Anything but a 2xx
 * with a readable answer in time is `failed`, which the guardrail's failure_mode decides: a
 * refused address, a redirect (never followed) and a timeout included.
 */
export async function callWebhook(g: WebhookGuardrail, facts: RemoteFacts, agent: WebhookAgent): Promise<RemoteVerdict> {
  let url: URL;
  try {
    url = new URL(g.url);
  } catch {
    return { action: 'failed' };
  }
  if (agent.refuses(url)) return { action: 'failed' };
  const body = JSON.stringify({ stage: facts.stage, texts: facts.texts, project_id: facts.projectId, key_id: facts.keyId, model: facts.model });
  const id = newEventId();
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent.dispatcher,
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(g.secret, id, timestamp, body) },
      body,
      signal: AbortSignal.timeout(g.timeout_ms),
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      // Read a little so the connection can be reused; what it says does not matter.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
      return { action: 'failed' };
    }
    const answer = (await res.body.json()) as { action?: unknown; texts?: unknown; reason?: unknown } | null;
    if (answer === null || typeof answer !== 'object') return { action: 'failed' };
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
