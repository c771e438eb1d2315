import type { Logger } from 'pino';

/** At most one console line per provider this often; failures in between are counted into it. */
const LINE_EVERY_MS = 10_000;

interface ProviderState {
  lastLineAt: number;
  lastCooldownLineAt: number;
  /** Failures since the last line, by error code. */
  failures: Map<string, number>;
}

/**
 * Console lines about providers, so an operator watching the proxy sees an outage, not only
 * /metrics: a provider that fails, enters its cooldown, or answers again after one. One line per
 * provider at most every 10 s (an outage under load would otherwise print a line per request);
 * the failures in between are counted into the next line. Costs nothing while providers answer.
 */
export class ProviderLog {
  private readonly providers = new Map<string, ProviderState>();

  constructor(private readonly log: Pick<Logger, 'warn' | 'info'>) {}

  /** A retryable failure; `cooldownMs` when it put the provider in a cooldown. */
  failed(provider: string, code: string, cooldownMs: number | null, now = Date.now()): void {
    const state = this.state(provider);
    state.failures.set(code, (state.failures.get(code) ?? 0) + 1);
    // Entering a cooldown is the line that matters: it is held back only by another cooldown line.
    const cooldown = cooldownMs !== null && now - state.lastCooldownLineAt >= LINE_EVERY_MS;
    if (!cooldown && now - state.lastLineAt < LINE_EVERY_MS) return;
    state.lastLineAt = now;
    if (cooldown) state.lastCooldownLineAt = now;
    const failures = [...state.failures].map(([c, n]) => (n === 1 ? c : `${c} ×${n}`)).join(', ');
    state.failures.clear();
    if (cooldownMs !== null) {
      this.log.warn({ provider, failures, cooldown_s: Math.round(cooldownMs / 1000) }, `provider ${provider} failed (${failures}); skipped for ${formatSeconds(cooldownMs)} unless no other provider can answer`);
    } else {
      this.log.warn({ provider, failures }, `provider ${provider} failed (${failures}); the next provider of the model was tried, if any`);
    }
  }

  /** The provider answered again after a cooldown. */
  recovered(provider: string): void {
    this.state(provider).failures.clear();
    this.log.info({ provider }, `provider ${provider} answers again; its cooldown is over`);
  }

  private state(provider: string): ProviderState {
    let state = this.providers.get(provider);
    if (state === undefined) this.providers.set(provider, (state = { lastLineAt: -Infinity, lastCooldownLineAt: -Infinity, failures: new Map() }));
    return state;
  }
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
