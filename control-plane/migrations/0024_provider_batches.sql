-- Provider-run batches (a provider entry's `batch: native`): the lines of a batch the gateway
-- admitted and handed to a provider's own batch API, one row per batch made at that provider
-- (`upstream_id`, the provider's id, never shown to clients). A line handed off names its
-- submission and is no longer claimed by runners; it is answered when the submission's results
-- are collected, after which the submission is `collected`. A submission whose provider batch
-- is cancelled (the client cancelled, the key was deleted) is `cancelled` once nothing more is
-- collected from it.
create table batch_submissions (
  id text primary key,
  batch_id text not null references batches (id) on delete cascade,
  provider text not null,
  upstream_id text not null,
  line_count integer not null,
  status text not null check (status in ('submitted', 'collected', 'cancelled')),
  created_at timestamptz not null default now(),
  ended_at timestamptz
);
create index batch_submissions_batch on batch_submissions (batch_id);

alter table batch_lines add column submission_id text;
