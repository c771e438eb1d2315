-- Accounts, projects, keys: small tables, the source of truth the Redis projection is built from.
create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  password_hash text not null,
  role text not null default 'member' check (role in ('admin', 'member')),
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table projects (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  quota_tokens bigint check (quota_tokens is null or quota_tokens >= 0),
  -- Sum of total_tokens over the project's usage records, kept by the writer in the same
  -- transaction as the inserts, so a replayed batch cannot count twice.
  used_tokens bigint not null default 0,
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index projects_live on projects (created_at, id) where deleted_at is null;

create table project_members (
  project_id uuid not null references projects (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user on project_members (user_id);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  -- First characters of the key, for display; the secret is never stored.
  prefix text not null,
  key_hash text not null unique,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  deleted_at timestamptz,
  last_used_at timestamptz
);
create index api_keys_project on api_keys (project_id, created_at) where deleted_at is null;

-- Records: append-only, billions of rows. Range-partitioned by month on ts (Unix ms, the API's
-- unit), so old months are dropped as whole tables (see docs/operations.md) and each list query
-- touches only the partitions its time range needs. The primary key (ts, id) makes a replayed
-- batch a no-op: a record's ts is fixed when the proxy creates it.
create table usage_records (
  ts bigint not null,
  id uuid not null,
  request_id text not null,
  project_id uuid not null,
  key_id uuid not null,
  model text not null,
  provider text not null,
  input_tokens integer not null,
  output_tokens integer not null,
  total_tokens integer not null,
  latency_ms integer not null,
  finish_reason text not null,
  stream boolean not null,
  primary key (ts, id)
) partition by range (ts);
create index usage_records_project on usage_records (project_id, ts, id);
create table usage_records_default partition of usage_records default;

create table audit_events (
  ts bigint not null,
  id uuid not null,
  request_id text not null,
  type text not null,
  outcome text not null,
  status smallint not null,
  error_code text,
  project_id uuid,
  key_id uuid,
  actor uuid,
  model text,
  provider text,
  client_ip text,
  user_agent text,
  latency_ms integer not null,
  primary key (ts, id)
) partition by range (ts);
create index audit_events_project on audit_events (project_id, ts, id);
create table audit_events_default partition of audit_events default;

-- One-off facts about this installation (for example: the demo project was seeded).
create table gateway_meta (
  key text primary key,
  value text not null,
  created_at timestamptz not null default now()
);
