-- Unsupported parameters: what a project's requests translated between protocols do with a
-- parameter that has no counterpart and only tunes the answer: 'drop' it (named in the answer's
-- x-gateway-dropped-params) or 'refuse' the request (400 UNSUPPORTED_PARAMETER). Null, the
-- default, is drop, so no existing row has to be written. Nullable without a default: no table
-- rewrite (the check only reads projects once, every existing row null and so within it).
alter table projects add column unsupported_params text check (unsupported_params is null or unsupported_params in ('drop', 'refuse'));
