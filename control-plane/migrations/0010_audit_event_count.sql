-- What audit events learnt with batch version 3:
-- - count: how many requests an event stands for. Every event is one request, except
--   `gateway.throttled`: the requests one client address sent in one second while the proxy's
--   failed-authentication throttle refused it, so that a flood of bad keys is accounted for
--   without adding a row per request.
-- - skipped: the providers serving the model that were not tried because they were in a
--   cooldown after failing.
--
-- Constant defaults live in the catalogue: instant on the partitioned parent and every
-- partition, existing and future; older rows read 1 and none, which is what they were.
alter table audit_events
  add column count integer not null default 1 check (count >= 1),
  add column skipped text[] not null default '{}';
