import type { Db, Queryable } from '../db/connect.js';

/**
 * The invalidation log in PostgreSQL (migration 0006): the durable second channel of deletions.
 * An entry is appended inside the transaction that makes the deletion, together with a NOTIFY
 * that PostgreSQL delivers only when that transaction commits; so once a DELETE has committed, the
 * deletion is both durable and announced, whatever Redis is doing.
 */
export type LoggedKind = 'key.deleted' | 'project.deleted';

export interface LogEntry {
  id: number;
  kind: LoggedKind;
  key_hash: string | null;
  key_id: string | null;
  project_id: string;
  /** Unix ms. */
  created_at: number;
}

/** The NOTIFY channel (per database, so a deployment's control planes share it). */
export const INVALIDATION_NOTIFY_CHANNEL = 'gateway_invalidations';
/** Entries are kept this long; a proxy away longer is told to start afresh (stream.reset). */
export const INVALIDATION_RETENTION_MS = 24 * 60 * 60 * 1000;
// Serialises appends to the log, so ids become visible in commit order (see the migration).
const APPEND_LOCK_ID = 7_236_501_115;

interface LogRow {
  id: bigint | number | string;
  kind: LoggedKind;
  key_hash: string | null;
  key_id: string | null;
  project_id: string;
  created_at: Date;
}

function toEntry(row: LogRow): LogEntry {
  return {
    id: Number(row.id),
    kind: row.kind,
    key_hash: row.key_hash,
    key_id: row.key_id,
    project_id: row.project_id,
    created_at: row.created_at.getTime(),
  };
}

/**
 * Appends deletions to the log; call it as the LAST statement of the deleting transaction. The
 * advisory lock is held until commit, and nothing is locked after it, so it cannot deadlock with
 * the row locks the deletion took.
 */
export async function appendInvalidations(
  tx: Queryable,
  entries: { kind: LoggedKind; key_hash: string | null; key_id: string | null; project_id: string }[],
): Promise<void> {
  if (entries.length === 0) return;
  await tx`select pg_advisory_xact_lock(${APPEND_LOCK_ID})`;
  for (const e of entries) {
    await tx`insert into invalidation_log (kind, key_hash, key_id, project_id) values (${e.kind}, ${e.key_hash}, ${e.key_id}, ${e.project_id})`;
  }
  await tx`select pg_notify(${INVALIDATION_NOTIFY_CHANNEL}, '')`;
}

/** Entries after `after`, oldest first, at most `limit`. */
export async function readInvalidations(sql: Queryable, after: number, limit = 1000): Promise<LogEntry[]> {
  const rows = await sql<LogRow[]>`
    select id, kind, key_hash, key_id, project_id, created_at from invalidation_log
    where id > ${after} order by id limit ${limit}`;
  return rows.map(toEntry);
}

/** The newest id (0 when the log is empty) and whether entries after `after` were pruned. */
export async function logPosition(sql: Queryable, after: number | null): Promise<{ head: number; pruned: boolean }> {
  const [row] = await sql<{ head: bigint | null; oldest: bigint | null }[]>`
    select max(id) as head, min(id) as oldest from invalidation_log`;
  const head = row?.head == null ? 0 : Number(row.head);
  const oldest = row?.oldest == null ? null : Number(row.oldest);
  if (after === null) return { head, pruned: false };
  // Identity ids have no gaps except for rolled-back appends and pruning; an `after` below the
  // oldest kept entry minus one may have missed pruned entries. A proxy ahead of the head (a
  // database restored from a backup) cannot be trusted either. Pruning keeps the newest entry, so
  // the head is always the last id ever given.
  const pruned = after > head || (oldest !== null && after < oldest - 1);
  return { head, pruned };
}

export async function pruneInvalidations(sql: Queryable, retentionMs = INVALIDATION_RETENTION_MS): Promise<number> {
  const rows = await sql`
    delete from invalidation_log
    where created_at < now() - ${`${retentionMs} milliseconds`}::interval
      and id < (select max(id) from invalidation_log)
    returning id`;
  return rows.length;
}

/**
 * Wakes the streams of this control plane when the log may have grown: on a NOTIFY (an append
 * committed on any control plane of the deployment), and every `pollMs` in case a notification was
 * missed while the listening connection was being re-established.
 */
export class InvalidationFeed {
  private readonly listeners = new Set<() => void>();
  private readonly streams = new Set<{ destroy(): void }>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | null = null;
  private polledHead = -1;

  constructor(
    private readonly sql: () => Db,
    private readonly pollMs = 1_000,
  ) {}

  async start(): Promise<void> {
    await this.listen();
    // One query a second for the whole control plane, not one per stream: streams are woken only
    // when the head moved.
    this.timer = setInterval(() => {
      logPosition(this.sql(), null).then(
        ({ head }) => {
          if (head === this.polledHead) return;
          this.polledHead = head;
          this.wake();
        },
        () => {},
      );
    }, this.pollMs);
    this.timer.unref();
  }

  /** LISTENs on the current pool; again after the pool was replaced (the old one's connection ends with it). */
  async listen(): Promise<void> {
    const previous = this.unlisten;
    const listening = await this.sql().listen(INVALIDATION_NOTIFY_CHANNEL, () => this.wake());
    this.unlisten = () => listening.unlisten();
    await previous?.().catch(() => {});
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An open stream's socket, cut at close() (a stream never ends by itself). */
  track(socket: { destroy(): void }): () => void {
    this.streams.add(socket);
    return () => this.streams.delete(socket);
  }

  /** Something was appended by this process: no need to wait for the notification's round trip. */
  wake(): void {
    for (const listener of this.listeners) listener();
  }

  /** Cuts every open stream; call before closing the HTTP server, which would wait for them. */
  closeStreams(): void {
    for (const socket of this.streams) socket.destroy();
    this.streams.clear();
  }

  async close(): Promise<void> {
    this.closeStreams();
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }
}
