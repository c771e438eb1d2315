import { Errors, GatewayError, looksLikeApiKey, type KeyRecord } from '@gateway/shared';
import type { GatewayDeps } from '../pipeline/context.js';

/**
 * The presented key, checked as every gateway request checks it (a Map lookup for a key seen
 * before, one Redis GET otherwise), started while the body arrives. The epoch guards against a
 * lookup answered before a deletion that was applied meanwhile: the key is then looked up again.
 */
type Pending = KeyRecord | GatewayError | Promise<KeyRecord | GatewayError>;

export class KeyCheck {
  /** The key's record when the proxy knows it even though the request is refused (the audit trail shows it). */
  known: KeyRecord | null = null;
  private epoch = -1;
  private pending: Pending | null = null;

  constructor(
    private readonly deps: GatewayDeps,
    private readonly apiKey: string,
  ) {}

  start(): void {
    this.pending = this.check();
  }

  /**
   * The record, or the refusal (401, or 503 while keys cannot be verified): at once for a key the
   * process knows (no promise), a promise only while Redis is asked.
   */
  result(): Pending {
    const first = this.pending ?? this.check();
    return first instanceof Promise ? first.then((r) => this.current(r)) : this.current(first);
  }

  /** A record looked up before a deletion applied meanwhile is looked up again. */
  private current(result: KeyRecord | GatewayError): Pending {
    return !(result instanceof GatewayError) && this.epoch !== this.deps.cache.currentEpoch ? this.check() : result;
  }

  /** Attributes a request refused before its key was checked, without asking Redis. */
  identify(): void {
    if (this.known === null && this.apiKey !== '' && looksLikeApiKey(this.apiKey)) this.known = this.deps.cache.peekPresented(this.apiKey);
  }

  private check(): Pending {
    const { apiKey, deps } = this;
    if (apiKey === '') return Errors.mcpNoApiKey();
    if (!looksLikeApiKey(apiKey)) return Errors.mcpInvalidApiKey();
    const now = Date.now();
    if (!deps.subscriber.trusted(now, deps.keyStaleBoundMs)) {
      this.known = deps.cache.peekPresented(apiKey);
      return unverifiable();
    }
    this.epoch = deps.cache.currentEpoch;
    const found = deps.cache.lookupPresented(apiKey, now);
    if (found === null) return this.invalid();
    if (!(found instanceof Promise)) return found;
    return found.then(
      (record) => {
        this.epoch = deps.cache.currentEpoch;
        return record ?? this.invalid();
      },
      () => unverifiable(),
    );
  }

  private invalid(): GatewayError {
    this.known = this.deps.cache.deadRecord(this.apiKey);
    return Errors.mcpInvalidApiKey();
  }
}

function unverifiable(): GatewayError {
  return Errors.keysUnverifiable();
}
