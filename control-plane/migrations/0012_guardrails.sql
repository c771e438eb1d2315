-- Guardrails: a project's ordered list of input and output checks (DESIGN §7 "Guardrails"), one
-- row per project that has any, kept apart from `projects` so the project's API answers and
-- webhook payloads never carry a guardrail webhook's secret. Projected to Redis beside the policy.
create table project_guardrails (
  project_id uuid primary key references projects (id) on delete cascade,
  guardrails jsonb not null,
  updated_at timestamptz not null default now()
);
