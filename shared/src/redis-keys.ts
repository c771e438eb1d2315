/**
 * Every Redis key, pub/sub channel and BullMQ queue the gateway uses, in one place. Both services
 * build names only through this class, so a prefix (one per deployment, or one per test file)
 * isolates everything at once.
 *
 * Names carry a Redis Cluster hash tag (the part in braces, which alone decides the slot) wherever
 * one Lua script, MULTI or pipeline touches several keys, since a cluster runs those only on keys
 * of one slot: everything about one project (key set, policy, quota ledgers, rate windows) shares
 * `{<project id>}` (its response-cache entries too); all sign-in counters `{signin}`; all sign-outs and their marker `{session}`;
 * each BullMQ queue's keys `{bull}`. API key records carry none, so they spread over the cluster.
 * docs/redis.md lists them.
 */
export class RedisKeys {
  /** Pub/sub channel carrying Invalidation messages (contracts/invalidation.ts). */
  readonly invalidationChannel: string;
  /** Counter bumped each time the control plane rebuilds the projection from Postgres. */
  readonly projectionEpoch: string;
  /**
   * BullMQ key prefix; BullMQ appends `:<queue>:<suffix>` itself. The hash tag in it keeps every
   * key of a queue in one slot, as BullMQ's scripts need on a cluster.
   */
  readonly bullPrefix: string;
  /** BullMQ queue that carries RecordBatch jobs from the proxies to the writer. */
  readonly recordsQueue = 'records';
  /** BullMQ queue of webhook work (deliveries, batched failure reports), run by the writers. */
  readonly webhooksQueue = 'webhooks';
  /** BullMQ queue of batches the gateway runs itself (BatchJob, one per batch), run by the proxies. */
  readonly batchesQueue = 'batches';

  /**
   * The BullMQ prefix of record queue `shard` (0 ≤ shard < RECORD_QUEUES). Queue 0 is the one
   * under `{bull}`, as before there were several; each other one has a hash tag of its own, so on a
   * Redis Cluster the queues (and the record traffic) spread over the masters.
   */
  recordsQueuePrefix(shard: number): string {
    return shard === 0 ? this.bullPrefix : `${this.prefix}{bull:records:${shard}}`;
  }

  constructor(readonly prefix: string = 'gw:') {
    this.invalidationChannel = `${prefix}invalidate`;
    this.projectionEpoch = `${prefix}projection:epoch`;
    this.bullPrefix = `${prefix}{bull}`;
  }

  /** String: the encoded KeyRecord of the API key whose SHA-256 is `hash`. */
  apiKey(hash: string): string {
    return `${this.prefix}key:${hash}`;
  }

  /** Set: the key hashes of a project, so a project deletion can find every projected key. */
  projectKeys(projectId: string): string {
    return `${this.prefix}project:{${projectId}}:keys`;
  }

  /**
   * Counter: failed (and in-flight) sign-in attempts in the current throttling window. `id` is a
   * hash of the normalised email for scope `email` (no address sits in a key name) and the client
   * address for scope `ip`.
   */
  signinFailures(scope: 'email' | 'ip', id: string): string {
    return `${this.prefix}{signin}:fail:${scope}:${id}`;
  }

  /**
   * String with a TTL: present while the management-API session `sessionId` is signed out (its
   * tokens, refreshed ones included, are refused). The TTL ends when the session could have no
   * live token left anyway. PostgreSQL holds the same facts (session_signouts).
   */
  sessionSignedOut(sessionId: string): string {
    return `${this.prefix}{session}:signedout:${sessionId}`;
  }

  /**
   * String: present once the sign-outs of PostgreSQL have been copied into this Redis. Missing
   * means Redis restarted empty, and the copy is made again before any token is trusted.
   */
  get signoutsLoaded(): string {
    return `${this.prefix}{session}:signouts-loaded`;
  }

  /** Match pattern for every projected API key (used by the projection rebuild). */
  apiKeyPattern(): string {
    return `${this.prefix}key:*`;
  }

  /** Match pattern for every project key-set (used by the projection rebuild). */
  projectKeysPattern(): string {
    return `${this.prefix}project:*:keys`;
  }

  /** String: the encoded ProjectPolicy (quota, rate limits, model policy) of a project. */
  projectPolicy(projectId: string): string {
    return `${this.prefix}project:{${projectId}}:policy`;
  }

  /**
   * String: the encoded GuardrailSet of a project (contracts/guardrails.ts); absent: none. Shares
   * the policy's hash tag, so a proxy reads both in one MGET.
   */
  projectGuardrails(projectId: string): string {
    return `${this.prefix}project:{${projectId}}:guardrails`;
  }

  /**
   * Hash: a project's quota ledger for one period (`total` or `m<YYYYMM>`): field `charged` holds
   * the tokens settled, and one `lease:<proxyId>` field per proxy the tokens it holds unspent.
   */
  quotaLedger(projectId: string, period: string): string {
    return `${this.prefix}quota:{${projectId}}:${period}`;
  }

  /** String: the encoded ProjectBudgets (contracts/project-budgets.ts) of a project; read with its policy. */
  projectBudgets(projectId: string): string {
    return `${this.prefix}project:{${projectId}}:budgets`;
  }

  /**
   * Hash: one budget's dollar ledger for one period (budget-period.ts ids), in nano-dollars:
   * `spent` (settled), and per proxy `lease:<proxyId>` (leased, unspent), `exp:<proxyId>` (when the
   * lease lapses, Redis time in ms) and `seq:<proxyId>` (its last settlement applied).
   */
  budgetLedger(projectId: string, budgetId: string, period: string): string {
    return `${this.prefix}budget:{${projectId}}:${budgetId}:${period}`;
  }

  /**
   * String: present once a control plane has loaded every budget's current ledger from PostgreSQL
   * into this Redis. While it is missing (Redis restarted empty) no proxy starts a ledger at 0.
   */
  get budgetLedgersReady(): string {
    return `${this.prefix}budgets:ready`;
  }

  /**
   * String: the secret every proxy signs MCP session ids with (JSON `{v: 1, secret}`, made by the
   * first proxy that finds none), so any replica verifies a session another one began.
   */
  get mcpSessionSecret(): string {
    return `${this.prefix}mcp:session-secret`;
  }

  /** Lock held by the one control plane loading budget ledgers and announcing their thresholds. */
  get budgetKeeperLock(): string {
    return `${this.prefix}lock:budget-keeper`;
  }

  /** Match pattern for every budget ledger (used by the reconciler). */
  budgetLedgerPattern(): string {
    return `${this.prefix}budget:*`;
  }

  /** Match pattern for every quota ledger (used by the reconciler). */
  quotaLedgerPattern(): string {
    return `${this.prefix}quota:*`;
  }

  /** String with a TTL: present while the proxy `proxyId` is alive (its leases are valid). */
  proxyAlive(proxyId: string): string {
    return `${this.prefix}proxy:${proxyId}:alive`;
  }

  /**
   * Counter of one fixed one-minute window of a rate limit (`scope` is key or project, `id` the
   * key's or the project's id). Tagged with the project, as one script checks a key's and its
   * project's windows together. The minute is the name's last part.
   */
  rateWindow(projectId: string, scope: 'key' | 'project', kind: 'requests' | 'tokens', id: string, minute: number): string {
    return `${this.prefix}rate:{${projectId}}:${scope}:${kind}:${id}:${minute}`;
  }

  /**
   * String: present once a control plane finished building the key projection on this Redis. A
   * proxy whose lookup misses while it is absent (Redis restarted empty, rebuild under way) answers
   * 503 and remembers nothing, since the key may simply not be projected yet.
   */
  get projectionReady(): string {
    return `${this.prefix}projection:ready`;
  }

  /**
   * String with a TTL: one response-cache entry (contracts/cache-entry.ts) of a project, for one
   * endpoint and the SHA-256 (base64url) of the request's canonical body. Under the project's hash
   * tag, with its index, so one MULTI stores both on a cluster.
   */
  cacheEntry(projectId: string, endpoint: string, hash: string): string {
    return `${this.prefix}cache:{${projectId}}:${endpoint}:${hash}`;
  }

  /**
   * Sorted set: the names of a project's cache entries, scored by the Unix ms at which each
   * expires, so a purge finds them without a SCAN (expired members are trimmed on each store).
   */
  cacheIndex(projectId: string): string {
    return `${this.prefix}cache:{${projectId}}:index`;
  }

  /** Lock held by the one control plane rebuilding the key projection. */
  get projectionRebuildLock(): string {
    return `${this.prefix}lock:projection-rebuild`;
  }

  /** Lock held by the one control plane running the quota reconciliation. */
  get reconcileLock(): string {
    return `${this.prefix}lock:quota-reconcile`;
  }
}
