-- The invalidation log: the second, durable channel by which proxies learn of deletions (the
-- first is Redis pub/sub). An entry is written in the same transaction as the deletion it
-- announces, so a committed deletion is always in the log; proxies follow it through
-- GET /internal/v1/invalidations?after=<id> and resume from the last id they saw. Writers take a
-- transaction-level advisory lock before inserting, so ids become visible in increasing order and
-- a reader that has seen id n has seen every entry below it. Entries older than the retention
-- (control-plane/src/keys/invalidation-log.ts) are pruned.

create table invalidation_log (
  id bigint generated always as identity primary key,
  kind text not null check (kind in ('key.deleted', 'project.deleted')),
  key_hash text,
  key_id uuid,
  project_id uuid not null,
  created_at timestamptz(3) not null default now()
);
create index invalidation_log_created on invalidation_log (created_at);
