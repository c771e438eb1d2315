-- Webhooks: a project's endpoints, the events sent to them and one delivery per (endpoint, event),
-- with what is needed to detect quota thresholds and batch failed gateway requests exactly once.

create table webhooks (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references projects (id) on delete cascade,
  url text not null check (length(url) between 1 and 2048),
  events text[] not null,
  -- The signing secret (`whsec_` + base64), needed in clear to sign. Shown once, at creation; no
  -- other response, audit event or log line ever carries it.
  secret text not null,
  enabled boolean not null default true,
  disabled_reason text,
  -- Deliveries that ended failed (every attempt spent) since the last successful one.
  consecutive_failures integer not null default 0,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz(3) not null default now()
);
create index webhooks_project on webhooks (project_id, created_at, id);

-- One event, sent as the same bytes to every endpoint and on every attempt: `payload` is the
-- exact JSON body, `id` (msg_…) the webhook-id header receivers de-duplicate on.
create table webhook_events (
  id text primary key,
  project_id uuid not null,
  type text not null,
  payload text not null,
  created_at timestamptz(3) not null default now()
);
create index webhook_events_created on webhook_events (created_at);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  webhook_id uuid not null references webhooks (id) on delete cascade,
  event_id text not null references webhook_events (id) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts smallint not null default 0,
  -- HTTP status of the last attempt; null when it got no answer.
  last_status smallint,
  -- Why the last attempt failed, in the gateway's own words: never the URL or the answer's body.
  last_error text,
  -- When a pending delivery is due; while an attempt runs, when that attempt is given up for lost.
  next_attempt_at timestamptz(3) not null default now(),
  last_attempt_at timestamptz(3),
  created_at timestamptz(3) not null default now(),
  unique (webhook_id, event_id)
);
create index webhook_deliveries_log on webhook_deliveries (webhook_id, created_at, id);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_event on webhook_deliveries (event_id);

-- Tokens per project and UTC month (`m202611`), kept by the writer beside projects.used_tokens, so
-- a monthly quota's use is one row to read. Filled for the current month from the records already
-- written; earlier months are not needed (thresholds are checked on the months records land in).
-- No foreign key: like the records themselves, a count may name a project that is gone.
create table project_usage_periods (
  project_id uuid not null,
  period text not null,
  used_tokens bigint not null,
  primary key (project_id, period)
);
insert into project_usage_periods (project_id, period, used_tokens)
select project_id, 'm' || to_char(now() at time zone 'UTC', 'YYYYMM'), sum(total_tokens)
from usage_records
where ts >= (extract(epoch from date_trunc('month', now() at time zone 'UTC')) * 1000)::bigint
group by project_id;

-- A quota threshold (80 or 100 %) a project reached in a period: the row is what makes the
-- quota.threshold event happen once, whichever writer saw the crossing. A changed quota arms the
-- thresholds again. event_id is set when the event was made (null: not yet, see the writer's sweep).
create table quota_thresholds (
  project_id uuid not null references projects (id) on delete cascade,
  period text not null,
  threshold smallint not null check (threshold in (80, 100)),
  quota_tokens bigint not null,
  used_tokens bigint not null,
  crossed_at timestamptz(3) not null default now(),
  event_id text,
  primary key (project_id, period, threshold, quota_tokens)
);
create index quota_thresholds_pending on quota_thresholds (crossed_at) where event_id is null;

-- Failed gateway requests waiting for the next gateway.request.failed event of their project.
-- Only projects with an enabled endpoint subscribed to that event get rows.
create table webhook_failed_requests (
  project_id uuid not null,
  audit_id uuid not null,
  ts bigint not null,
  request_id text not null,
  status smallint not null,
  error_code text,
  model text,
  provider text,
  key_id uuid,
  endpoint text,
  landed_at timestamptz(3) not null default now(),
  primary key (project_id, audit_id)
);
create index webhook_failed_requests_landed on webhook_failed_requests (landed_at);
