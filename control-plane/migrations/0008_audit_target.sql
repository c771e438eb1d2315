-- What a management action acted on: the account, project member, project, key or webhook, so an
-- audit trail says "alice disabled bob", not only "alice disabled an account". Gateway requests
-- and events with no object (sign-ins, sign-outs) leave both null.
--
-- Nullable columns without a default: catalogue-only on the partitioned parent and every
-- partition, instant on any number of rows; the record writer's inserts, which do not name them,
-- are unchanged.
alter table audit_events
  add column target_type text,
  add column target_id text;
