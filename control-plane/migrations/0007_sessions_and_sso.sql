-- The dashboard's refresh cookie is rotated on every use: this row holds the id of the one refresh
-- token of the session still allowed. A refresh token of the session with another id was already
-- used (stolen and replayed, or replayed by the thief after the owner refreshed): the session ends.
-- Rows are useless after expires_at (the session's end) and are deleted from then on.
create table session_refresh_tokens (
  session_id text primary key,
  user_id uuid not null references users (id) on delete cascade,
  token_id text not null,
  expires_at timestamptz not null
);
create index session_refresh_tokens_expiry on session_refresh_tokens (expires_at);

-- With PASSWORD_SIGNIN=false only single sign-on signs in, except the accounts the break-glass
-- command (`npm run admin`) created or reset: the way back in when the identity provider is down.
alter table users add column break_glass boolean not null default false;
