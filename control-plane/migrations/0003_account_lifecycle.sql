-- Accounts that can be disabled, and sessions that can be ended.
--
-- tokens_valid_after: a token whose session began at or before this instant is refused. Set by a
-- password change or reset and by disabling the account; read in the same row the control plane
-- already reads on every request, so revoking costs no extra query.
alter table users
  add column disabled boolean not null default false,
  add column tokens_valid_after timestamptz;

-- Millisecond precision, the unit of list cursors, so the users list pages exactly on
-- (created_at, id) and can walk an index to do it.
alter table users alter column created_at type timestamptz(3);
create index users_created on users (created_at, id);

-- Signed-out sessions. Redis holds the same facts for the per-request check; this table is what
-- Redis is filled from again after it restarts empty. Rows are useless after expires_at (no token
-- of the session can still be alive) and are deleted from then on.
create table session_signouts (
  session_id text primary key,
  user_id uuid not null references users (id) on delete cascade,
  expires_at timestamptz not null
);
create index session_signouts_expiry on session_signouts (expires_at);
