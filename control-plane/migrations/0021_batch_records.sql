-- Batch lines: the batch (`batch_…` / `msgbatch_…`) a request was a line of, on its usage record
-- and its audit event (batch version 6); null for every other request. Nullable without defaults:
-- no table rewrite, instant on any number of rows (the partitions take the columns too).
alter table usage_records add column batch_id text;
alter table audit_events add column batch_id text;

-- The lists' batch_id filter. Partial, since almost no request is a batch line: only the lines'
-- rows are indexed. (ts, id) after the batch id, so a page of one batch's records walks the index
-- in the lists' keyset order and stops after a page, however many lines the batch has. Created on
-- the partitioned parents, as 0013's, so every monthly partition, existing or later, gets them;
-- building them reads the existing rows once (none of which is indexed).
create index usage_records_batch on usage_records (batch_id, ts, id) where batch_id is not null;
create index audit_events_batch on audit_events (batch_id, ts, id) where batch_id is not null;
