-- What the proxies enforce per project besides the quota total: the period the quota counts
-- over, rate limits per key and per project, an allow-list of models and a cap on max_tokens.
-- Null everywhere means "no limit".
alter table projects
  add column quota_period text not null default 'total' check (quota_period in ('total', 'month')),
  add column key_rpm integer check (key_rpm is null or key_rpm >= 0),
  add column key_tpm integer check (key_tpm is null or key_tpm >= 0),
  add column project_rpm integer check (project_rpm is null or project_rpm >= 0),
  add column project_tpm integer check (project_tpm is null or project_tpm >= 0),
  add column allowed_models text[],
  add column max_tokens_cap integer check (max_tokens_cap is null or max_tokens_cap > 0);
