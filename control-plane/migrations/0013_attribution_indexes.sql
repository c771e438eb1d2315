-- Indexes for the cost-attribution filters of the record lists and the usage summary
-- (`tag=<key>=<value>`, `end_user=`): the tags of usage records and audit events by containment
-- (`tags @> '{"team":"search"}'`; jsonb_path_ops is the smaller GIN opclass and serves exactly
-- that operator), and the end user within a project, only over the rows that have one. Created on
-- the partitioned parents, so every monthly partition, existing or later, gets them.
create index usage_records_tags on usage_records using gin (tags jsonb_path_ops);
create index usage_records_end_user on usage_records (project_id, end_user, ts) where end_user is not null;
create index audit_events_tags on audit_events using gin (tags jsonb_path_ops);
create index audit_events_end_user on audit_events (project_id, end_user, ts) where end_user is not null;
