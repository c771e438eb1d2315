-- The response cache: a project's setting ({"mode": "off"|"exact", "ttl_seconds": n}; null, the
-- default, is off). Nullable without a default: no table rewrite, instant on any number of rows.
alter table projects add column cache jsonb;
