-- A key's default cost-attribution tags ({"team": "search"}), applied to each of its requests
-- unless the request names the same tag key in x-gateway-tags. '{}' (the default) is none. A
-- constant default: only the catalogue changes, instant on any number of keys.
alter table api_keys add column tags jsonb not null default '{}';
