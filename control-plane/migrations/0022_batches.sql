-- Files and batches (OpenAI's Files and Batch APIs, Anthropic's Message Batches), kept through the
-- control plane's internal routes since the proxies never reach PostgreSQL. A file (`file-…`) is
-- opened `uploading`, its lines arrive in several calls (each line one JSON text, numbered from 0,
-- a call sent again changing nothing), and it becomes `processed` when the proxy says every line
-- is in; only then is it listed, read or used. `endpoints` maps each url its lines call to the
-- first line calling it, so a batch is checked against its endpoint without reading the lines.
-- Deletion is soft: a batch reading the file meanwhile keeps its lines. A file of purpose
-- `batch_output` / `batch_error` holds no lines of its own: its content is its batch's results
-- (`batch_id`), so `bytes` may be 0 (not known when it is made).
create table batch_files (
  id text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  key_id uuid,
  purpose text not null check (purpose in ('batch', 'batch_output', 'batch_error', 'batch_requests')),
  filename text not null,
  bytes bigint not null default 0,
  line_count integer not null default 0,
  status text not null check (status in ('uploading', 'processed')),
  batch_id text,
  endpoints jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  deleted_at timestamptz
);
create index batch_files_project on batch_files (project_id, created_at);

create table batch_file_lines (
  file_id text references batch_files (id) on delete cascade,
  line_no integer,
  content text not null,
  primary key (file_id, line_no)
);

-- A batch (`batch_…` of the OpenAI API, `msgbatch_…` of Anthropic's) runs the lines of its input
-- file; `completed` / `failed` count the lines answered 2xx / otherwise. `reason` says why the
-- gateway itself cancelled or failed it (its key deleted: UNAUTHORIZED). The partial index finds
-- the live batches of a key that is being deleted.
create table batches (
  id text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  key_id uuid not null,
  api text not null check (api in ('openai', 'anthropic')),
  endpoint text not null,
  input_file_id text not null,
  completion_window text not null,
  metadata jsonb,
  status text not null check (status in ('validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled')),
  total integer not null default 0,
  completed integer not null default 0,
  failed integer not null default 0,
  output_file_id text,
  error_file_id text,
  reason jsonb,
  created_at timestamptz not null default now(),
  in_progress_at timestamptz,
  finalizing_at timestamptz,
  completed_at timestamptz,
  failed_at timestamptz,
  expired_at timestamptz,
  cancelling_at timestamptz,
  cancelled_at timestamptz,
  expires_at timestamptz not null
);
create index batches_project on batches (project_id, created_at);
create index batches_live_key on batches (key_id) where status not in ('completed', 'failed', 'expired', 'cancelled');

-- One row per input line, made with the batch. `claimed_at`, set when a runner first takes the
-- line and never changed after, keys the line's usage record and audit event, so a line run again
-- after its runner died writes records the writer already holds. A line keeps its first answer:
-- `body` the answer as the client would have had it, or `error` the gateway's own answer for a
-- line it never ran (`body` then null).
create table batch_lines (
  batch_id text references batches (id) on delete cascade,
  line_no integer,
  claimed_at timestamptz,
  answered_at timestamptz,
  status_code integer,
  request_id text,
  body jsonb,
  error jsonb,
  primary key (batch_id, line_no)
);
