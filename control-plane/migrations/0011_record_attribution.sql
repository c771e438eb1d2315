-- What records learnt with batch version 4:
-- - tags: the request's cost-attribution tags (x-gateway-tags over the key's default tags);
-- - end_user: the client's own end user (OpenAI `user`, Anthropic `metadata.user_id`);
-- - usage: cache_write_tokens (prompt tokens written to the provider's cache, part of
--   input_tokens like cached_tokens), cache_hit and saved_usd (an answer replayed from the
--   gateway's response cache, and what the provider call behind it cost);
-- - audit: cache (hit, miss or bypass, for a project with the response cache on) and guardrails
--   (every guardrail decision on the request, in order).
--
-- Constant defaults live in the catalogue: instant on the partitioned parents and every partition;
-- older rows read no tags, no end user, no cache and no guardrails, which is what they had.
alter table usage_records
  add column cache_write_tokens integer not null default 0,
  add column tags jsonb not null default '{}',
  add column end_user text,
  add column cache_hit boolean not null default false,
  -- Money is numeric, as cost_usd is.
  add column saved_usd numeric(20, 10);

alter table audit_events
  add column tags jsonb not null default '{}',
  add column end_user text,
  add column cache text,
  add column guardrails jsonb not null default '[]';
