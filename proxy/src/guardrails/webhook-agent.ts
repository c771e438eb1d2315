import { guardedLookup, refusedLiteral, WEBHOOK_TIMEOUT_MAX_MS, type Resolver } from '@gateway/shared';
import { Agent } from 'undici';

/**
 * The connections of webhook guards, one agent for the proxy's life so a guard asked on every
 * request reuses its connection. A guard's URL was checked when it was saved, but a name can
 * point elsewhere since (DNS rebinding, a record changed on purpose): unless private addresses
 * are allowed, every socket connects only to an address the rule passed at that moment
 * (shared/src/net/address-policy.ts), and a URL naming a non-public address literal is refused
 * before any connection, since a socket makes no lookup for it.
 */
export interface WebhookAgentOptions {
  /** GUARDRAIL_WEBHOOK_ALLOW_PRIVATE: no address rule (tests, closed networks). */
  allowPrivate: boolean;
  /** Name resolution; the system's by default (tests put a fixed answer here). */
  resolve?: Resolver;
}

/** The longest a guard may take; each call also has its own guard's timeout_ms. */
const LONGEST_GUARD_MS = WEBHOOK_TIMEOUT_MAX_MS;

export class WebhookAgent {
  readonly dispatcher: Agent;
  private readonly allowPrivate: boolean;

  constructor(options: WebhookAgentOptions) {
    this.allowPrivate = options.allowPrivate;
    this.dispatcher = new Agent({
      // No connection cap: requests wait for their guard, and a queue behind a cap would add to each one's latency.
      keepAliveTimeout: 10_000,
      headersTimeout: LONGEST_GUARD_MS,
      bodyTimeout: LONGEST_GUARD_MS,
      connect: { timeout: LONGEST_GUARD_MS, ...(options.allowPrivate ? {} : { lookup: guardedLookup(options.resolve) }) },
    });
  }

  /** True when the URL may not be called at all (its host is a non-public address literal). */
  refuses(url: URL): boolean {
    return !this.allowPrivate && refusedLiteral(url);
  }

  async close(): Promise<void> {
    await this.dispatcher.destroy().catch(() => {});
  }
}
