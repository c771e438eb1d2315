import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ContractError, decodeInvalidation, type Invalidation, type RedisKeys } from '@gateway/shared';
import type { InFlightRegistry } from './in-flight.js';
import type { KeyCache } from './key-cache.js';

/**
 * Listens on the invalidation channel with its own connection (a subscribed connection can do
 * nothing else). While that connection is down the proxy cannot hear deletions, so the key map is
 * marked unverified; on reconnect it is dropped whole, because messages sent meanwhile are lost.
 */
/** Told about project changes (policy caches, quota leases). */
export interface ProjectListener {
  projectChanged(projectId: string): void;
  /** Everything cached about projects may be stale (reconnect, projection rebuilt). */
  allStale(): void;
}

export class InvalidationSubscriber {
  private unverifiedSince: number | null = Date.now();
  private closed = false;
  /** Called after each applied message (tests and metrics observe propagation). */
  onApplied: ((msg: Invalidation, revoked: number) => void) | undefined;

  constructor(
    private readonly sub: Redis,
    private readonly keys: RedisKeys,
    private readonly cache: KeyCache,
    private readonly inFlight: InFlightRegistry,
    private readonly log: Logger,
    private readonly projects: ProjectListener,
  ) {}

  /** Resolves once subscribed: no key is looked up before deletions can be heard. */
  async start(): Promise<void> {
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === this.keys.invalidationChannel) this.apply(message);
    });
    const markUnverified = () => {
      if (this.unverifiedSince === null && !this.closed) {
        this.unverifiedSince = Date.now();
        this.log.warn('invalidation channel lost; cached keys are unverified until it is back');
      }
    };
    this.sub.on('close', markUnverified);
    this.sub.on('reconnecting', markUnverified);
    this.sub.on('ready', () => {
      if (this.closed || this.unverifiedSince === null) return;
      this.resync().catch((err: Error) => this.log.error({ err: { message: err.message } }, 'resubscribe failed'));
    });
    await this.resync();
  }

  private async resync(): Promise<void> {
    await this.sub.subscribe(this.keys.invalidationChannel);
    // Deletions published while we were away were not heard: forget everything cached.
    this.cache.clear();
    this.projects.allStale();
    if (this.unverifiedSince !== null) this.log.info('invalidation channel subscribed; key map starts fresh');
    this.unverifiedSince = null;
  }

  /** True while cached keys may be served: subscribed, or lost for less than `boundMs`. */
  trusted(now: number, boundMs: number): boolean {
    return this.unverifiedSince === null || now - this.unverifiedSince < boundMs;
  }

  get subscribed(): boolean {
    return this.unverifiedSince === null;
  }

  apply(raw: string): void {
    let msg: Invalidation;
    try {
      msg = decodeInvalidation(raw);
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      // A message we cannot read may have been a deletion: be safe and forget everything.
      this.log.warn({ reason: err.message }, 'unreadable invalidation; dropping the key map');
      this.cache.clear();
      this.projects.allStale();
      return;
    }
    let revoked = 0;
    switch (msg.kind) {
      case 'key.deleted':
        if (msg.key_hash !== null) this.cache.forgetKey(msg.key_hash);
        if (msg.key_id !== null) revoked = this.inFlight.revokeKey(msg.key_id);
        break;
      case 'key.created':
        if (msg.key_hash !== null) this.cache.forgetKey(msg.key_hash);
        break;
      case 'project.deleted':
        if (msg.project_id !== null) {
          this.cache.forgetProject(msg.project_id);
          this.projects.projectChanged(msg.project_id);
          revoked = this.inFlight.revokeProject(msg.project_id);
        }
        break;
      case 'project.updated':
        if (msg.project_id !== null) this.projects.projectChanged(msg.project_id);
        break;
      case 'projection.rebuilt':
        this.cache.clear();
        this.projects.allStale();
        break;
    }
    this.onApplied?.(msg, revoked);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sub.quit().catch(() => {});
  }
}
