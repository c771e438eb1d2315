-- Stored responses: the Responses API state the proxies keep through the control plane (they never
-- reach PostgreSQL themselves), for `previous_response_id` and GET /v1/responses/{id}. One row per
-- response id (`resp_…`), of one project, written again whole when the proxy stores it again but
-- never moved to another project. `provider` names the provider entry that stored the response
-- itself (the row then only says where it lives: `response` is null); null for a response the
-- gateway keeps, whose `response` is the answer as the client got it. `messages` is the
-- conversation up to and including the response in the gateway's internal chat format, what a
-- request naming it as `previous_response_id` continues from (null when it cannot be continued).
-- `expires_at` is set when the row is written, from the project's responses_ttl_days; expired
-- rows are never answered and are deleted in batches by the control plane.
create table stored_responses (
  id text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  provider text,
  model text not null,
  input_items jsonb not null,
  response jsonb,
  messages jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index stored_responses_expires on stored_responses (expires_at);
create index stored_responses_project on stored_responses (project_id, created_at);

-- How long a project's stored responses are kept, in days; null, the default, is 30. Nullable
-- without a default: no table rewrite (the check only reads projects once, every existing row
-- null and so within it).
alter table projects add column responses_ttl_days integer check (responses_ttl_days is null or responses_ttl_days between 1 and 3650);
