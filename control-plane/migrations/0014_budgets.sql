-- Spending budgets (docs/budgets.md): a dollar limit per project, key or tag over a period. The
-- proxies enforce them from dollar leases in Redis; what they spent is the usage records'
-- cost_usd, from which a budget's spend is rebuilt when Redis loses its ledgers.
create table budgets (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  scope text not null check (scope in ('project', 'key', 'tag')),
  -- The key the budget counts (scope key); cascades away with the key's row, never with a soft delete.
  key_id uuid references api_keys (id) on delete cascade,
  -- `name=value` (scope tag).
  tag text check (tag is null or length(tag) between 3 and 97),
  limit_usd numeric(20, 10) not null check (limit_usd >= 0),
  -- total | day | week | month | <n>m | <n>h | <n>d
  period text not null check (period ~ '^(total|day|week|month|[1-9][0-9]{0,5}[mhd])$'),
  timezone text not null default 'UTC',
  alert_at double precision[] not null default '{}',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz(3) not null default now(),
  check ((scope = 'key') = (key_id is not null)),
  check ((scope = 'tag') = (tag is not null))
);
create index budgets_project on budgets (project_id, created_at, id);

-- Facts of the spend ledger: each alert fraction a budget reached in a period, once (the
-- budget.threshold webhook's exactly-once), with the spend and limit seen when it was reached.
create table budget_thresholds (
  budget_id uuid not null references budgets (id) on delete cascade,
  project_id uuid not null,
  period_id text not null,
  fraction double precision not null,
  limit_usd numeric(20, 10) not null,
  spent_usd numeric(20, 10) not null,
  period_start timestamptz(3) not null,
  crossed_at timestamptz(3) not null default now(),
  event_id text,
  primary key (budget_id, period_id, fraction)
);
create index budget_thresholds_pending on budget_thresholds (crossed_at) where event_id is null;

-- The most completions one request may ask for (`n`); null is the default, 8.
alter table projects add column max_n integer check (max_n is null or max_n between 1 and 128);
