import { budgetWindow, Errors, type GatewayError, type BudgetRule, type RedisClient, type RedisKeys } from '@gateway/shared';
import { budgetLedgerCommand, type LedgerCommand } from './budget-ledger-script.js';
import { LeaseRate } from './lease-rate.js';

/**
 * Dollar budgets without a Redis round trip per request, on the pattern of the quota's token
 * leases (quota-leases.ts): each budget's ledger in Redis (one hash per period, budget-ledger-script.ts)
 * holds `spent` and one lease per proxy; a proxy leases a block of dollars, reserves each request's
 * worst case from it locally and settles the true cost in batches. Unlike the quota's, every lease
 * here has a TTL kept in the ledger itself (renewed while the proxy lives), so a dead proxy's
 * reservations are reclaimed by the script alone, and every settlement carries a sequence number
 * the script applies once. Amounts are integer nano-dollars.
 *
 *   spent + Σ live leases ≤ limit   holds in Redis at every call (checked atomically in Lua);
 *   lease:<proxy> = balance + reserved + settled costs not yet written, here (after each call the
 *   balance is set from what Redis says the lease is, so a lease Redis dropped or lost cannot be
 *   spent twice);
 *   a request reserves its worst case in every budget that applies at once (all or none), so spend
 *   can only pass a limit by what requests cost beyond their worst case (none: the prompt estimate
 *   is an upper bound and the output is capped) or by the outage allowance below.
 *
 * While a ledger's Redis cannot be reached (or has not been loaded again after a restart), this
 * proxy keeps serving from what it holds and then from an allowance of `outageFraction` of the
 * limit per ledger and outage; that is the documented bound of overspend per proxy and outage
 * (docs/budgets.md). Once Redis answers again, the costs settled meanwhile are written to `spent`
 * and the lease is set from what Redis holds.
 */
export interface BudgetHold {
  readonly parts: readonly HoldPart[];
  /** Settled once: a second settlement of the same request changes nothing. */
  settled: boolean;
}

interface HoldPart {
  ledger: Ledger;
  amount: number;
}

interface Ledger {
  key: string;
  projectId: string;
  rule: BudgetRule;
  limit: number;
  /** Start of its period (0: total), in Unix ms. */
  start: number;
  /** End of its period (null: total), in Unix ms. */
  end: number | null;
  /** Leased to this proxy and not reserved by any request (negative: a debt to lease back first). */
  balance: number;
  reserved: number;
  inFlight: number;
  /** Settled costs not yet sent. */
  pendingCharge: number;
  /** A settlement sent and not yet known to have landed: sent again as it is, under its seq. */
  outbox: { seq: number; charge: number; release: number } | null;
  /** Local time until which the lease may be spent from (before Redis could let it lapse). */
  validUntil: number;
  /** Redis said this proxy holds a lease here. */
  held: boolean;
  lastUsed: number;
  lastSync: number;
  leasing: Promise<void> | null;
  /** The last call failed, or found the ledger not loaded: the outage allowance applies. */
  away: boolean;
  outageUsed: number;
  /** Script calls finished, and what they granted in all: whether a request's round of leasing got anything. */
  syncs: number;
  granted: number;
  rate: LeaseRate;
}

export interface BudgetLeaseOptions {
  /** Largest block leased at once, nano-dollars. */
  blockNanos: number;
  idleMs: number;
  flushMs: number;
  /** Lease TTL: a proxy silent this long holds nothing. */
  leaseTtlMs: number;
  /** Share of a limit each proxy may admit per outage without Redis. */
  outageFraction: number;
}

export const NANOS_PER_USD = 1_000_000_000;

/** How long a period's ledger outlives its end (late settlements, reports). */
const LEDGER_GRACE_MS = 2 * 24 * 3600 * 1000;

export class BudgetLeases {
  private readonly ledgers = new Map<string, Ledger>();
  /** budget id → its ledger for the period now. */
  private readonly current = new Map<string, Ledger>();
  private readonly command: LedgerCommand;
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;
  /** The control plane has loaded this Redis's ledgers (checked again after every reconnect). */
  private ledgersReady = false;
  private stopped = false;
  /**
   * Settlement numbers, one sequence for every ledger of this proxy: Redis keeps the last one it
   * applied for as long as the ledger lives, so a ledger forgotten here when idle and taken up
   * again must go on from above it, or its next settlements would read as repeats and be dropped.
   */
  private seq = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly proxyId: string,
    private readonly options: BudgetLeaseOptions,
  ) {
    this.command = budgetLedgerCommand(redis);
    redis.on('close', () => {
      this.ledgersReady = false;
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.flushMs);
    this.timer.unref();
  }

  /**
   * `amount` nano-dollars reserved in each of `rules` (all of them or none): the hold, a refusal
   * naming the budget, or a promise of either when a lease must be taken first.
   */
  reserve(projectId: string, rules: readonly BudgetRule[], amount: number, now: number): BudgetHold | GatewayError | Promise<BudgetHold | GatewayError> {
    const ledgers: Ledger[] = new Array(rules.length);
    let ready = true;
    for (let i = 0; i < rules.length; i++) {
      const ledger = this.ledgerFor(projectId, rules[i]!, now);
      ledger.lastUsed = now;
      ledger.rate.add(amount);
      ledgers[i] = ledger;
      if (!spendable(ledger, amount, now)) ready = false;
    }
    if (ready) return take(ledgers, amount);
    return this.reserveWithLeases(ledgers, amount, now);
  }

  /**
   * Settles `nanos` (negative: gives them back) in each budget's ledger of the window `at` falls
   * in, with no hold and no refusal: a provider-run batch's line, charged its worst case when it
   * was handed off and its cost when it is collected (batches/provider-line-steps.ts).
   */
  adjust(projectId: string, rules: readonly BudgetRule[], at: number, nanos: number): void {
    if (nanos === 0) return;
    const now = Date.now();
    for (const rule of rules) {
      const ledger = this.ledgerFor(projectId, rule, at);
      ledger.balance -= nanos;
      ledger.pendingCharge += nanos;
      ledger.lastUsed = now;
    }
  }

  private async reserveWithLeases(ledgers: Ledger[], amount: number, now: number): Promise<BudgetHold | GatewayError> {
    let at = now;
    // Requests waiting on the same lease may find it spent by the one before them: such a request
    // leases again, and is refused only once a lease call in its round granted nothing more (the
    // limit has no room), so requests racing for one lease are all admitted while it has.
    for (let round = 1; ; round++) {
      const syncs = ledgers.map((ledger) => ledger.syncs);
      const granted = ledgers.map((ledger) => ledger.granted);
      await Promise.all(ledgers.map((ledger) => this.ensure(ledger, amount, now)));
      at = Date.now();
      // Checked again all together, then taken all together in this one synchronous pass.
      let short = -1;
      for (let i = 0; i < ledgers.length; i++) {
        const ledger = ledgers[i]!;
        if (spendable(ledger, amount, at)) continue;
        if (ledger.away) {
          if (!this.fitsAllowance(ledger, amount)) return Errors.budgetUncheckable();
          continue;
        }
        short = i;
        break;
      }
      if (short < 0) break;
      const ledger = ledgers[short]!;
      const leasedNothing = ledger.syncs > syncs[short]! && ledger.granted === granted[short];
      if (leasedNothing || round >= MAX_LEASE_ROUNDS) return refusal(ledger, amount);
    }
    for (const ledger of ledgers) {
      if (!spendable(ledger, amount, at)) {
        // Within the outage allowance: admitted on this proxy's word, written to `spent` later.
        ledger.outageUsed += amount;
        ledger.balance += amount;
      }
    }
    return take(ledgers, amount);
  }

  private fitsAllowance(ledger: Ledger, amount: number): boolean {
    return ledger.outageUsed + amount <= Math.floor(ledger.limit * this.options.outageFraction);
  }

  /** Leases what the request lacks plus about a second of this proxy's use (or learns Redis is away). */
  private async ensure(ledger: Ledger, amount: number, now: number): Promise<void> {
    while (ledger.leasing !== null) await ledger.leasing;
    if (spendable(ledger, amount, Date.now())) return;
    const want = Math.max(0, amount - ledger.balance) + ledger.rate.block(ledger.limit, this.options.blockNanos, now);
    await this.sync(ledger, want, 0);
  }

  /** The request is over and cost `actual` nano-dollars: each budget's reservation becomes that cost. */
  settle(hold: BudgetHold, actual: number): void {
    if (hold.settled) return;
    hold.settled = true;
    const now = Date.now();
    for (const { ledger, amount } of hold.parts) {
      ledger.inFlight--;
      ledger.reserved -= amount;
      ledger.balance += amount - actual;
      ledger.pendingCharge += actual;
      ledger.lastUsed = now;
    }
  }

  /** The project's budgets changed: hand back what is leased so new limits apply at once. */
  release(projectId: string): void {
    for (const [budgetId, ledger] of this.current) {
      if (ledger.projectId !== projectId) continue;
      ledger.lastUsed = 0;
      this.current.delete(budgetId);
    }
    void this.tick(true);
  }

  private ledgerFor(projectId: string, rule: BudgetRule, now: number): Ledger {
    const known = this.current.get(rule.id);
    if (known !== undefined && known.rule === rule && now >= known.start && (known.end === null || now < known.end)) return known;
    const window = budgetWindow(rule, now);
    const key = this.keys.budgetLedger(projectId, rule.id, window.id);
    let ledger = this.ledgers.get(key);
    if (ledger === undefined) {
      ledger = {
        key,
        projectId,
        rule,
        limit: 0,
        start: window.start,
        end: window.end,
        balance: 0,
        reserved: 0,
        inFlight: 0,
        pendingCharge: 0,
        outbox: null,
        validUntil: 0,
        held: false,
        lastUsed: now,
        lastSync: 0,
        leasing: null,
        away: false,
        outageUsed: 0,
        syncs: 0,
        granted: 0,
        rate: new LeaseRate(now),
      };
      this.ledgers.set(key, ledger);
    }
    ledger.rule = rule;
    ledger.limit = Math.floor(rule.limit_usd * NANOS_PER_USD);
    this.current.set(rule.id, ledger);
    return ledger;
  }

  /**
   * One call of the ledger script: the settlement waiting (sent again under its seq until it is
   * known to have landed), `release` handed back, `want` more asked for, the lease renewed. The
   * balance is then what Redis says this proxy's lease is, less what is reserved and not yet sent.
   */
  private sync(ledger: Ledger, want: number, release: number): Promise<void> {
    if (ledger.leasing !== null) return ledger.leasing;
    if (this.stopped) return Promise.resolve();
    // A negative charge is a provider-run batch line's worst case given back (adjust).
    if (ledger.outbox === null && (ledger.pendingCharge !== 0 || release > 0)) {
      ledger.outbox = { seq: ++this.seq, charge: ledger.pendingCharge, release };
      ledger.pendingCharge = 0;
      ledger.balance -= release;
    }
    const out = ledger.outbox;
    const sentAt = Date.now();
    const run = async () => {
      try {
        if (!this.ledgersReady) this.ledgersReady = (await this.redis.exists(this.keys.budgetLedgersReady)) === 1;
        const [known, grant, , mine] = await this.command({
          key: ledger.key,
          limit: ledger.limit,
          want,
          proxyId: this.proxyId,
          ttlMs: this.options.leaseTtlMs,
          expireAt: ledger.end === null ? 0 : ledger.end + LEDGER_GRACE_MS,
          seq: out?.seq ?? 0,
          charge: out?.charge ?? 0,
          release: out?.release ?? 0,
          mayStart: this.ledgersReady,
        });
        if (known === 0) {
          // Lost with a Redis restart and not loaded again yet: the costs settled here are in the
          // usage records it will be rebuilt from, and nothing is leased until then.
          ledger.outbox = null;
          ledger.pendingCharge = 0;
          ledger.balance = -ledger.reserved;
          ledger.validUntil = 0;
          ledger.held = false;
          ledger.away = true;
          return;
        }
        ledger.outbox = null;
        ledger.granted += grant;
        ledger.balance = mine - ledger.reserved - ledger.pendingCharge;
        ledger.held = mine > 0;
        // Stop spending from the lease well before Redis could let it lapse.
        ledger.validUntil = sentAt + Math.floor(this.options.leaseTtlMs * 0.8);
        ledger.lastSync = sentAt;
        ledger.away = false;
        ledger.outageUsed = 0;
      } catch {
        ledger.away = true;
      }
    };
    ledger.leasing = run().finally(() => {
      ledger.syncs++;
      ledger.leasing = null;
    });
    return ledger.leasing;
  }

  /**
   * Writes settled costs, renews leases in use, hands back idle ones; forgets ledgers left with
   * nothing. One script call per ledger, sent together (ledgers of different projects may sit on
   * different nodes of a cluster).
   */
  private async tick(force = false): Promise<void> {
    if (this.flushing && !force) return;
    this.flushing = true;
    try {
      const now = Date.now();
      const calls: Promise<void>[] = [];
      for (const ledger of this.ledgers.values()) {
        if (ledger.leasing !== null) {
          // A call already under way took what was settled before it: a flush asked for now
          // waits for it and then writes what settled meanwhile, so nothing is left behind.
          if (force) calls.push(ledger.leasing.then(() => this.visit(ledger, Date.now())));
          continue;
        }
        calls.push(this.visit(ledger, now));
      }
      await Promise.all(calls);
    } finally {
      this.flushing = false;
    }
  }

  /** One ledger's share of a tick: its settlements written, its lease renewed or handed back, or the ledger forgotten. */
  private visit(ledger: Ledger, now: number): Promise<void> {
    if (ledger.leasing !== null) return ledger.leasing;
    const idle = ledger.inFlight === 0 && now - ledger.lastUsed >= this.options.idleMs;
    const release = idle && ledger.balance > 0 ? ledger.balance : 0;
    const renew = ledger.held && (ledger.inFlight > 0 || !idle) && now - ledger.lastSync >= this.options.leaseTtlMs / 4;
    if (ledger.pendingCharge !== 0 || ledger.outbox !== null || release > 0 || renew || (idle && ledger.held)) return this.sync(ledger, 0, release);
    if (idle && !ledger.held && ledger.balance <= 0 && this.ledgers.get(ledger.key) === ledger) {
      this.ledgers.delete(ledger.key);
      if (this.current.get(ledger.rule.id) === ledger) this.current.delete(ledger.rule.id);
    }
    return Promise.resolve();
  }

  /** Stops at once, writing nothing more (what a crash does; leases then lapse by their TTL). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.stopped = true;
  }

  /** Writes what is waiting now (the timer's work, on demand). */
  flush(): Promise<void> {
    return this.tick(true);
  }

  /** Settles and hands back everything (at drain). */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const ledger of this.ledgers.values()) ledger.lastUsed = 0;
    for (let i = 0; i < 3 && this.ledgers.size > 0; i++) await this.tick(true);
  }

  /** Ledgers this proxy holds something in (tests and metrics). */
  get size(): number {
    return this.ledgers.size;
  }
}

/** Rounds of leasing one reservation may take while others race it for the same lease (reserveWithLeases). */
const MAX_LEASE_ROUNDS = 100;

function spendable(ledger: Ledger, amount: number, now: number): boolean {
  return ledger.leasing === null && ledger.balance >= amount && ledger.validUntil > now;
}

function take(ledgers: Ledger[], amount: number): BudgetHold {
  const parts: HoldPart[] = new Array(ledgers.length);
  for (let i = 0; i < ledgers.length; i++) {
    const ledger = ledgers[i]!;
    ledger.balance -= amount;
    ledger.reserved += amount;
    ledger.inFlight++;
    parts[i] = { ledger, amount };
  }
  return { parts, settled: false };
}

const usd = (nanos: number) => `$${(nanos / NANOS_PER_USD).toFixed(nanos < 1e7 ? 6 : 2)}`;

function refusal(ledger: Ledger, amount: number): GatewayError {
  const { rule } = ledger;
  const scope = rule.scope === 'project' ? 'the project' : rule.scope === 'key' ? `key ${rule.key_id}` : `tag ${rule.tag}`;
  const per = rule.period === 'total' ? 'in total' : `per ${rule.period}`;
  return Errors.budgetCannotCover(rule.id, scope, usd(ledger.limit), per, usd(amount));
}
