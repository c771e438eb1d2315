import { LeaseRate } from './lease-rate.js';
import { Errors, quotaPeriodId, quotaPeriodRange, type GatewayError, type ProjectPolicy, type RedisClient, type RedisKeys } from '@gateway/shared';

/**
 * Token quotas without a Redis round trip per request. Each project's quota ledger in Redis (one
 * hash per period) holds `charged` (tokens settled) and one `lease:<proxy>` field per proxy (tokens
 * handed to that proxy and not yet spent). A proxy leases a block, reserves each request's
 * estimate from it locally, and settles the true count in batches:
 *
 *   charged + Σ leases ≤ quota   holds in Redis at every lease (checked atomically in Lua);
 *   lease:<proxy> = balance + reservations in flight + settled counts not yet written, here;
 *   a settled request gives back at once, locally, what it reserved and did not use, and its true
 *   count moves from the lease to `charged` at the next write. So what one proxy can still admit
 *   never depends on how recently it wrote to Redis;
 *   a request reserves its estimate before it is forwarded, so the quota can only be overshot by
 *   requests that used more than they reserved (output is capped by max_tokens, so in practice by
 *   the error of the prompt estimate) — the bound documented in docs/quotas.md.
 *
 * A block is sized by this proxy's own share of the project's traffic: about a second of what it
 * reserved lately (at least 1 % of the quota), capped by `blockTokens` and by a sixteenth of the quota. A proxy (or worker)
 * that sees one request now and then leases little more than that request, so a small quota is
 * not locked up in the unspent blocks of many quiet workers while a busy one is refused.
 *
 * Unspent leases are handed back after a short idle time, at drain, and when the project's policy
 * changes; the leases of a proxy that died are dropped by the control plane's reconciler once the
 * proxy's alive key has expired.
 */
export interface Reservation {
  ledger: Ledger | null;
  amount: number;
}

interface Ledger {
  key: string;
  projectId: string;
  quota: number;
  /**
   * Leased to this proxy, not reserved by any request: negative while requests that used more
   * than they reserved are paid back from the next lease.
   */
  balance: number;
  /** Settled true counts not yet moved from this proxy's lease to `charged`. */
  pendingCharge: number;
  inFlight: number;
  /** Tokens reserved by the requests in flight. */
  reserved: number;
  /** Tokens admitted without a lease since Redis was last reached. */
  outageUsed: number;
  lastUsed: number;
  leasing: Promise<void> | null;
  /** Seconds a monthly ledger outlives its month (0: none). */
  ttl: number;
  /** This proxy's own rate of use, which sizes its blocks. */
  rate: LeaseRate;
}

export interface QuotaLeaseOptions {
  /** Largest block leased at once (a smaller one for small quotas). */
  blockTokens: number;
  /** Unspent leases go back after this long without use. */
  idleMs: number;
  /** How often settled counts are written to Redis. */
  flushMs: number;
  aliveTtlMs: number;
  /**
   * Share of the quota this proxy may still admit per Redis outage once its lease is spent (0: none,
   * refused 503 as before). Admitted as a debt the next lease pays back; the documented bound of
   * overshoot per proxy and outage (docs/budgets.md#when-redis-is-away).
   */
  outageFraction?: number;
}

export const FREE: Reservation = { ledger: null, amount: 0 };

// KEYS[1] ledger hash
// ARGV[1] quota, ARGV[2] tokens wanted, ARGV[3] this proxy's lease field, ARGV[4] ledger TTL (s,
// 0 = none). Returns { tokens granted (0 when nothing is left), charged }.
// The proxy's alive key is set just before, by its own command: on a cluster it lives in another
// slot than the ledger, and one script may touch only one slot.
const LEASE_LUA = `
local total = 0
local charged = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local v = tonumber(fields[i + 1])
  total = total + v
  if fields[i] == 'charged' then charged = v end
end
local avail = tonumber(ARGV[1]) - total
if avail <= 0 then return { 0, charged } end
local grant = math.min(tonumber(ARGV[2]), avail)
redis.call('HINCRBY', KEYS[1], ARGV[3], grant)
if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[4]) end
return { grant, charged }
`;

type LeaseCommand = (ledger: string, quota: number, want: number, field: string, ttl: number) => Promise<[number, number]>;

export class QuotaLeases {
  private readonly ledgers = new Map<string, Ledger>();
  /**
   * A policy's ledger for the period it was found in: the request path's lookup without building
   * the period's name and the ledger's key per request. Checked against `ledgers`, which drops a
   * ledger once idle.
   */
  private readonly byPolicy = new WeakMap<ProjectPolicy, { ledger: Ledger; from: number; to: number }>();
  private readonly field: string;
  private readonly lease: LeaseCommand;
  private timer: NodeJS.Timeout | undefined;
  private lastAlive = 0;
  private flushing = false;
  /** The connection dropped: Redis may have come back empty, without this proxy's leases. */
  private verifyLeases = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly proxyId: string,
    private readonly options: QuotaLeaseOptions,
  ) {
    this.field = `lease:${proxyId}`;
    redis.defineCommand('gatewayQuotaLease', { numberOfKeys: 1, lua: LEASE_LUA });
    const command = (redis as unknown as { gatewayQuotaLease: LeaseCommand }).gatewayQuotaLease.bind(redis);
    this.lease = command;
    redis.on('close', () => {
      this.verifyLeases = true;
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.flushMs);
    this.timer.unref();
  }

  /** The reservation, a refusal, or a promise of either when a lease must be taken first. */
  reserve(policy: ProjectPolicy, estimate: number, now: number): Reservation | GatewayError | Promise<Reservation | GatewayError> {
    if (policy.quota_tokens === null) return FREE;
    const ledger = this.ledgerFor(policy, now);
    ledger.lastUsed = now;
    ledger.rate.add(estimate);
    if (ledger.leasing === null && ledger.balance >= estimate) return this.take(ledger, estimate);
    return this.reserveWithLease(ledger, estimate, now);
  }

  /**
   * Settles `tokens` (negative: gives them back) in the ledger of the period `at` falls in, with
   * no reservation and no refusal: a provider-run batch's line, charged its estimate when it was
   * handed off and its true count when it is collected (batches/provider-line-steps.ts).
   */
  adjust(policy: ProjectPolicy, at: number, tokens: number): void {
    if (policy.quota_tokens === null || tokens === 0) return;
    const ledger = this.ledgerFor(policy, at);
    ledger.balance -= tokens;
    ledger.pendingCharge += tokens;
    ledger.lastUsed = Date.now();
  }

  /** Tokens to lease beyond what the waiting request needs: about a second of this proxy's own use. */
  private blockFor(ledger: Ledger, now: number): number {
    return ledger.rate.block(ledger.quota, this.options.blockTokens, now);
  }

  private take(ledger: Ledger, amount: number): Reservation {
    ledger.balance -= amount;
    ledger.inFlight++;
    ledger.reserved += amount;
    return { ledger, amount };
  }

  private async reserveWithLease(ledger: Ledger, estimate: number, now: number): Promise<Reservation | GatewayError> {
    while (ledger.leasing !== null) await ledger.leasing.catch(() => {});
    if (ledger.balance >= estimate) return this.take(ledger, estimate);
    const want = estimate - ledger.balance + this.blockFor(ledger, now);
    let failed = false;
    let charged = 0;
    // Alive before the lease (sent first on the connection), so the reconciler does not find
    // this lease without its proxy alive.
    // A failed one is made again by the next tick.
    this.lastAlive = Date.now();
    void this.redis.set(this.keys.proxyAlive(this.proxyId), '1', 'PX', this.options.aliveTtlMs).catch(() => {
      this.lastAlive = 0;
    });
    ledger.leasing = this.lease(ledger.key, ledger.quota, want, this.field, ledger.ttl).then(
      (result) => {
        ledger.balance += Number(result[0]);
        charged = Number(result[1]);
      },
      () => {
        failed = true;
      },
    );
    await ledger.leasing;
    ledger.leasing = null;
    if (failed) {
      if (ledger.outageUsed + estimate > Math.floor(ledger.quota * (this.options.outageFraction ?? 0))) {
        return Errors.quotaUncheckable();
      }
      // The outage allowance: a debt of the lease (a negative balance), paid back by the next one.
      ledger.outageUsed += estimate;
      return this.take(ledger, estimate);
    }
    ledger.outageUsed = 0;
    if (ledger.balance >= estimate) return this.take(ledger, estimate);
    return refusal(ledger, estimate, charged + ledger.pendingCharge);
  }

  /** The request is over: `actual` tokens were used of the `amount` it reserved. */
  settle(reservation: Reservation, actual: number): void {
    const ledger = reservation.ledger;
    if (ledger === null) return;
    ledger.inFlight--;
    ledger.reserved -= reservation.amount;
    ledger.balance += reservation.amount - actual;
    ledger.pendingCharge += actual;
    ledger.lastUsed = Date.now();
  }

  /** The project's policy changed: hand back what is leased so the new quota applies at once. */
  release(projectId: string): void {
    for (const ledger of this.ledgers.values()) if (ledger.projectId === projectId) ledger.lastUsed = 0;
    void this.tick(true);
  }

  private ledgerFor(policy: ProjectPolicy, now: number): Ledger {
    const known = this.byPolicy.get(policy);
    if (known !== undefined && now >= known.from && now < known.to && this.ledgers.get(known.ledger.key) === known.ledger) {
      known.ledger.quota = policy.quota_tokens ?? 0;
      return known.ledger;
    }
    const period = quotaPeriodId(policy.quota_period, now);
    const key = this.keys.quotaLedger(policy.id, period);
    let ledger = this.ledgers.get(key);
    if (ledger === undefined) {
      ledger = {
        key,
        projectId: policy.id,
        quota: policy.quota_tokens ?? 0,
        balance: 0,
        pendingCharge: 0,
        inFlight: 0,
        reserved: 0,
        outageUsed: 0,
        lastUsed: now,
        leasing: null,
        // A monthly ledger is kept for two months, long enough to be reconciled and reported.
        ttl: period === 'total' ? 0 : 62 * 24 * 3600,
        rate: new LeaseRate(now),
      };
      this.ledgers.set(key, ledger);
    }
    ledger.quota = policy.quota_tokens ?? 0;
    this.byPolicy.set(policy, { ledger, ...quotaPeriodRange(period) });
    return ledger;
  }

  /**
   * Writes settled counts and idle leases back to Redis; what fails is kept for the next tick. One
   * MULTI per ledger (each moves tokens between two fields of one hash, which must stay in step),
   * sent together: ledgers of different projects may sit on different nodes of a cluster.
   */
  private async tick(force = false): Promise<void> {
    if (this.flushing && !force) return;
    this.flushing = true;
    try {
      if (this.verifyLeases) {
        if (this.redis.status === 'ready') await this.reclaimLostLeases();
        // Until it is known which leases Redis still has, writing could make a lost one negative.
        if (this.verifyLeases) return;
      }
      const now = Date.now();
      const writes: Promise<void>[] = [];
      for (const ledger of this.ledgers.values()) {
        const idle = ledger.inFlight === 0 && ledger.leasing === null && now - ledger.lastUsed >= this.options.idleMs;
        // An idle proxy hands back its balance; a negative one (a debt) is added to the ledger.
        const returned = idle ? ledger.balance : 0;
        const charge = ledger.pendingCharge;
        if (charge === 0 && returned === 0) {
          if (idle) this.ledgers.delete(ledger.key);
          continue;
        }
        const multi = this.redis.multi();
        if (charge !== 0) multi.hincrby(ledger.key, 'charged', charge);
        multi.hincrby(ledger.key, this.field, -(charge + returned));
        if (ledger.ttl > 0) multi.expire(ledger.key, ledger.ttl);
        ledger.pendingCharge = 0;
        ledger.balance -= returned;
        writes.push(
          multi.exec().then(
            () => {},
            () => {
              ledger.pendingCharge += charge;
              ledger.balance += returned;
            },
          ),
        );
      }
      if (now - this.lastAlive > this.options.aliveTtlMs / 3) {
        this.lastAlive = now;
        writes.push(
          this.redis.set(this.keys.proxyAlive(this.proxyId), '1', 'PX', this.options.aliveTtlMs).then(
            () => {},
            () => {
              this.lastAlive = 0;
            },
          ),
        );
      }
      await Promise.all(writes);
    } finally {
      this.flushing = false;
    }
  }

  /**
   * After a reconnect: a ledger that no longer has this proxy's lease field was lost with Redis
   * (a restart without persistence; the reconciler starts it again from PostgreSQL). The unspent
   * part of the lease is gone with it, and the field is made again with only what this proxy has in
   * use (reservations in flight, settled counts not yet charged), so that moving those to `charged`
   * cannot drive the field negative and hand other proxies tokens that do not exist.
   */
  private async reclaimLostLeases(): Promise<void> {
    this.verifyLeases = false;
    try {
      // First say this proxy is alive, so the reconciler does not drop the fields made again below.
      await this.redis.set(this.keys.proxyAlive(this.proxyId), '1', 'PX', this.options.aliveTtlMs);
      this.lastAlive = Date.now();
      for (const ledger of [...this.ledgers.values()]) {
        if ((await this.redis.hexists(ledger.key, this.field)) === 1) continue;
        ledger.balance = 0;
        const inUse = ledger.reserved + ledger.pendingCharge;
        if (inUse > 0) await this.redis.hincrby(ledger.key, this.field, inUse);
      }
    } catch {
      this.verifyLeases = true;
    }
  }

  /** Settles and returns everything, and says this proxy holds no leases any more. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const ledger of this.ledgers.values()) ledger.lastUsed = 0;
    for (let i = 0; i < 3 && this.ledgers.size > 0; i++) await this.tick(true);
    await this.redis.del(this.keys.proxyAlive(this.proxyId)).catch(() => {});
  }
}

const count = new Intl.NumberFormat('en-US');

/** Why the reservation did not fit: the quota is used up, or this request is larger than what is left. */
function refusal(ledger: Ledger, estimate: number, used: number): GatewayError {
  if (used >= ledger.quota) return Errors.quotaUsedUp();
  const left = Math.max(0, ledger.balance);
  return Errors.quotaCannotCover(count.format(estimate), count.format(left), count.format(ledger.quota));
}
