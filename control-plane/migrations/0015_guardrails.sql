-- Guardrails: a project's ordered list of input and output checks (DESIGN §7 "Guardrails"), one
-- row per project that has any, kept apart from `projects` so the project's API answers and
-- webhook payloads never carry a guardrail webhook's secret. Projected to Redis beside the policy.
create table project_guardrails (
  project_id uuid primary key references projects (id) on delete cascade,
  guardrails jsonb not null,
  updated_at timestamptz not null default now()
);

-- Requests a guardrail blocked wait for their project's next `guardrail.blocked` webhook event in
-- the same table as failed requests (one window, one worker job): `kind` tells them apart and
-- `guardrails` names the guardrails that blocked. Defaults keep the existing rows as they were.
alter table webhook_failed_requests add column kind text not null default 'failed';
alter table webhook_failed_requests add column guardrails text[];
