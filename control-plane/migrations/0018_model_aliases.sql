-- Model aliases: a project's map of the model ids its clients ask for to the ids it is served
-- ({"<asked>": "<served>"}; null, the default, is none), and the id a usage record's request
-- asked for when an alias served another (null otherwise). Nullable without defaults: no table
-- rewrite, instant on any number of rows (the partitions of usage_records take the column too).
alter table projects add column model_aliases jsonb;
alter table usage_records add column requested_model text;
