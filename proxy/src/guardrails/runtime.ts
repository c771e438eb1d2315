import { appliesTo, STREAM_WINDOW_DEFAULT, type Guardrail, type GuardrailDecision, type ProjectPolicy, type ProviderConfig } from '@gateway/shared';
import { localDetector, type Detector } from '@gateway/shared/guardrails';
import { Counter, type Registry } from 'prom-client';
import { WebhookAgent, type WebhookAgentOptions } from './webhook-agent.js';

/** A guardrail ready to run: its detector when the gateway runs it itself, null for remote ones. */
export interface Guard {
  g: Guardrail;
  detect: Detector | null;
}

/** A policy's guardrails, compiled once per policy version (a policy object is never changed). */
export interface CompiledGuards {
  input: Guard[];
  output: Guard[];
  /** The input guards that also read MCP tool calls' arguments (`mcp: true`). */
  mcp: Guard[];
  /** Characters of a stream held back; Infinity when a remote guard must see the whole answer. */
  window: number;
}

/** Where a moderation guard sends its texts (a provider of the providers file). */
export interface ModerationTarget {
  baseUrl: string;
  apiKey: string | null;
}

/**
 * What the guardrail steps share for the proxy's life: compiled lists per policy object (a
 * WeakMap: a replaced policy takes its compiled guards with it), the moderation providers, the
 * webhook guards' connections and the per-guardrail counter.
 */
export class GuardrailRuntime {
  private readonly compiled = new WeakMap<ProjectPolicy, CompiledGuards>();
  private readonly moderation = new Map<string, ModerationTarget>();
  readonly decisions: Counter<'guardrail' | 'stage' | 'action'>;
  readonly webhooks: WebhookAgent;

  constructor(providers: readonly ProviderConfig[], registry: Registry, webhooks: WebhookAgentOptions) {
    this.webhooks = new WebhookAgent(webhooks);
    for (const p of providers) if (p.base_url !== null) this.moderation.set(p.name, { baseUrl: p.base_url.replace(/\/+$/, ''), apiKey: p.api_key });
    this.decisions = new Counter({
      name: 'gateway_guardrail_decisions_total',
      help: 'Guardrail decisions by guardrail id, stage and action (flag includes failures let through)',
      labelNames: ['guardrail', 'stage', 'action'] as const,
      registers: [registry],
    });
  }

  compiledFor(policy: ProjectPolicy, guardrails: readonly Guardrail[]): CompiledGuards {
    let found = this.compiled.get(policy);
    if (found === undefined) {
      const guard = (g: Guardrail): Guard => ({ g, detect: localDetector(g) });
      const output = guardrails.filter((g) => appliesTo(g, 'output')).map(guard);
      const remote = output.some((o) => o.detect === null);
      const windows = output.map((o) => o.g.stream_window ?? STREAM_WINDOW_DEFAULT);
      const window = remote ? Infinity : Math.max(0, ...windows);
      const input = guardrails.filter((g) => appliesTo(g, 'input')).map(guard);
      found = { input, output, window, mcp: input.filter((i) => i.g.mcp === true) };
      this.compiled.set(policy, found);
    }
    return found;
  }

  moderationTarget(provider: string): ModerationTarget | null {
    return this.moderation.get(provider) ?? null;
  }

  count(decision: GuardrailDecision): void {
    this.decisions.inc({ guardrail: decision.id, stage: decision.stage, action: decision.action });
  }

  async close(): Promise<void> {
    await this.webhooks.close();
  }
}
