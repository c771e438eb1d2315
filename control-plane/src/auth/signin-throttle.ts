import { createHash } from 'node:crypto';
import { Errors, type RedisKeys, type RedisClient } from '@gateway/shared';

/**
 * Brute-force brake for password sign-ins, shared by every control-plane replica through Redis.
 * Two fixed-window counters per attempt: one per account (guessing one user's password) and one
 * per client address (spraying many accounts). The account is the one the database lookup found
 * (by id), so every spelling that reaches the account shares its counter; an email that matches no
 * account is counted as the lookup normalised it. An attempt is counted before the password is
 * checked, so a burst of parallel guesses cannot slip past the limit; a success then takes its
 * own attempt back and clears the account's counter.
 *
 * The trade-off is deliberate: once an account's window is full even its right password waits
 * for the window to end, or guessing would simply continue.
 */
export interface ThrottleLimits {
  perEmail: number;
  perIp: number;
  windowSeconds: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = { perEmail: 5, perIp: 30, windowSeconds: 15 * 60 };

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * KEYS[1]: the address counter. ARGV: none. Result: the new count, or nil when the window already
 * ended. A plain DECR on an expired counter would create one at -1 that never expires.
 */
const GIVE_BACK = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('decr', KEYS[1]) end return nil`;

export class SigninThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS,
  ) {}

  /** Counts one attempt; refuses it when either window already holds its limit. */
  async attempt(account: ThrottledAccount, ip: string): Promise<ThrottleVerdict> {
    // An offline client queues commands instead of failing them; without the brake no password
    // is checked at all (fail closed) rather than leaving the caller waiting.
    if (this.redis.status !== 'ready') throw Errors.signinUnavailable();
    const emailKey = this.accountKey(account);
    const ipKey = this.keys.signinFailures('ip', ip);
    const window = this.limits.windowSeconds;
    // EXPIRE … NX starts the window at the first attempt and never pushes it further out, so a
    // caller who keeps hammering still gets through once the window ends.
    const results = await this.redis
      .multi()
      .incr(emailKey)
      .expire(emailKey, window, 'NX')
      .incr(ipKey)
      .expire(ipKey, window, 'NX')
      .ttl(emailKey)
      .ttl(ipKey)
      .exec();
    const value = (i: number) => Number(results?.[i]?.[1] ?? 0);
    const overEmail = value(0) > this.limits.perEmail;
    const overIp = value(2) > this.limits.perIp;
    if (!overEmail && !overIp) return { allowed: true };
    const ttl = Math.max(overEmail ? value(4) : 0, overIp ? value(5) : 0);
    return { allowed: false, retryAfterSeconds: Math.max(1, ttl) };
  }

  /** A correct password: the account starts afresh and the address gets its attempt back. */
  async succeeded(account: ThrottledAccount, ip: string): Promise<void> {
    await this.redis.multi().del(this.accountKey(account)).eval(GIVE_BACK, 1, this.keys.signinFailures('ip', ip)).exec();
  }

  private accountKey(account: ThrottledAccount): string {
    const name = 'userId' in account ? `user:${account.userId}` : `email:${account.normalisedEmail}`;
    return this.keys.signinFailures('email', createHash('sha256').update(name).digest('hex').slice(0, 32));
  }
}

/** The account an attempt is for: found by the lookup, or the email as the lookup normalised it. */
export type ThrottledAccount = { userId: string } | { normalisedEmail: string };

export function throttledAccount(lookup: { user: { id: string } | null; normalised: string }): ThrottledAccount {
  return lookup.user === null ? { normalisedEmail: lookup.normalised } : { userId: lookup.user.id };
}
