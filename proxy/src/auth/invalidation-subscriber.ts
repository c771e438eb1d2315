import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ContractError, decodeInvalidation, quitRedis, type Invalidation, type RedisKeys } from '@gateway/shared';
import type { InFlightRegistry } from './in-flight.js';
import type { InvalidationStream } from './invalidation-stream.js';
import type { KeyCache } from './key-cache.js';

/**
 * Applies invalidations from both channels (docs/architecture.md, "Two invalidation channels") and
 * decides whether cached keys may be served.
 *
 * The Redis channel: a subscription on its own connection (a subscribed connection can do nothing
 * else). The log stream (invalidation-stream.ts), when CONTROL_PLANE_URL is set. A message is
 * applied from whichever channel brings it first; applying it again changes nothing.
 *
 * Cached keys are served while either channel is live; once both are lost, for `boundMs` more
 * (KEY_STALE_BOUND_MS), then requests are refused with 503. When the Redis subscription comes back
 * after a gap, messages sent meanwhile are lost: the key map is dropped, unless the log stream is
 * live, since it resumes from its last id and so has missed no deletion. Either way the "unknown
 * key" answers are dropped (a key.created may have been missed) and project policies re-read.
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
  private subscribedBefore = false;
  private stream: InvalidationStream | null = null;
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

  /** The second channel; its messages come in through applyMessage() and resetKeys(). */
  attachStream(stream: InvalidationStream): void {
    this.stream = stream;
  }

  /** Resolves once subscribed: no key is looked up before deletions can be heard. */
  async start(): Promise<void> {
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === this.keys.invalidationChannel) this.apply(message);
    });
    const markUnverified = () => {
      if (this.unverifiedSince === null && !this.closed) {
        this.unverifiedSince = Date.now();
        this.log.warn(
          this.streamLive(Date.now())
            ? 'lost the Redis connection that carries key deletions; the control plane still sends them'
            : 'lost the Redis connection that carries key deletions; known keys are served for KEY_STALE_BOUND_MS more, then refused until it is back',
        );
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
    const gap = this.unverifiedSince;
    this.unverifiedSince = null;
    if (this.streamLive(Date.now())) {
      // Deletions made meanwhile were in the log, which the stream resumes from its last id.
      this.cache.forgetUnknown();
      this.log.info('Redis connection for key deletions is back; none were missed (the control plane sent them meanwhile)');
    } else {
      // Deletions published while we were away were not heard: forget everything cached.
      this.cache.clear();
      // The first subscription is part of a normal start: nothing to tell the operator.
      if (gap !== null && this.subscribedBefore) this.log.info('Redis connection for key deletions is back; cached keys are read again in case one was deleted meanwhile');
      this.subscribedBefore = true;
    }
    this.projects.allStale();
  }

  private streamLive(now: number): boolean {
    return this.stream !== null && this.stream.lostAt(now) === null;
  }

  /**
   * True while cached keys may be served: either channel live, or both lost for less than
   * `boundMs` (counted from when the second one was lost).
   */
  trusted(now: number, boundMs: number): boolean {
    if (this.unverifiedSince === null) return true;
    const streamLost = this.stream === null ? 0 : this.stream.lostAt(now);
    if (streamLost === null) return true;
    return now - Math.max(this.unverifiedSince, streamLost) < boundMs;
  }

  /** The Redis subscription is up. */
  get subscribed(): boolean {
    return this.unverifiedSince === null;
  }

  /** A raw message from the Redis channel. */
  apply(raw: string): void {
    let msg: Invalidation;
    try {
      msg = decodeInvalidation(raw);
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      // A message we cannot read may have been a deletion: be safe and forget everything.
      this.resetKeys(`unreadable invalidation: ${err.message}`);
      return;
    }
    this.applyMessage(msg);
  }

  /** Forget every cached key (and project policy): something may have been missed. */
  resetKeys(reason: string): void {
    this.log.warn({ reason }, 'dropping the key map');
    this.cache.clear();
    this.projects.allStale();
  }

  /** A decoded message from either channel; idempotent. */
  applyMessage(msg: Invalidation): void {
    let revoked = 0;
    switch (msg.kind) {
      case 'key.deleted':
        if (msg.key_hash !== null) this.cache.keyDeleted(msg.key_hash, msg.key_id, msg.project_id);
        if (msg.key_id !== null) revoked = this.inFlight.revokeKey(msg.key_id);
        break;
      case 'key.created':
        if (msg.key_hash !== null) this.cache.forgetKey(msg.key_hash);
        break;
      case 'project.deleted':
        if (msg.project_id !== null) {
          this.cache.projectDeleted(msg.project_id);
          this.projects.projectChanged(msg.project_id);
          revoked = this.inFlight.revokeProject(msg.project_id);
        }
        break;
      case 'project.updated':
        if (msg.project_id !== null) this.projects.projectChanged(msg.project_id);
        break;
      case 'projection.rebuilt':
        // From a control plane of an earlier version: it announced every rebuild this way.
        this.cache.clear();
        this.projects.allStale();
        break;
      case 'stream.alive':
      case 'stream.reset':
        // Never published on Redis; the stream handles its own.
        return;
    }
    this.onApplied?.(msg, revoked);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stream?.close();
    await quitRedis(this.sub);
  }
}
