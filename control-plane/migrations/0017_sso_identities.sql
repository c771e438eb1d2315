-- Single sign-on binds an account to the identity provider's issuer and subject (the ID token's
-- `iss` and `sub`), which the provider never reassigns to another person. The email only finds an
-- account the first time, and only when the provider says it verified it: many providers let
-- people, or the admins of any tenant, set the email claim to anything.
-- One subject per account and issuer, so a second identity with the same email cannot join an
-- account already bound (the unique index on (user_id, issuer) also serves the cascade).
create table user_identities (
  issuer text not null,
  subject text not null,
  user_id uuid not null references users (id) on delete cascade,
  -- The email claim when the binding was made, and at the latest sign-in: records, never a key.
  email_at_link text not null,
  last_email text not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (issuer, subject),
  unique (user_id, issuer)
);
