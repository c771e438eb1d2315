-- What records learnt with batch version 2: what a request cost, the prompt tokens read from the
-- provider's cache, which inbound API it came in on, the provider's own finish reason when the
-- gateway's set has no name for it, and the providers tried before an answer.
--
-- Columns added to the partitioned parents reach every partition, existing and future. Constant
-- defaults are stored in the catalogue (no table rewrite), so this is instant on billions of rows.
-- Rows written before it read the defaults: no cached tokens, no cost, chat completions, and for
-- audit events no endpoint, 0 attempts and no providers (not backfilled: an update of every row
-- would rewrite the tables). The writer gives records of v1 batches written from now on the
-- fuller defaults of their batch version (record-rows.ts).
alter table usage_records
  add column cached_tokens integer not null default 0,
  -- Money is numeric, never float: sums over millions of rows stay exact to the 10th decimal.
  add column cost_usd numeric(20, 10),
  add column endpoint text not null default 'chat.completions',
  add column provider_finish_reason text;

alter table audit_events
  add column endpoint text,
  add column attempts smallint not null default 0,
  add column providers text[] not null default '{}';
