-- The items of the stored responses by id, for the Responses API's `item_reference` input items
-- (the Vercel AI SDK refers to earlier assistant messages and tool calls this way). A row points
-- at the item where it lives — `place` 'input' (input_items) or 'output' (response.output) of
-- `response_id`, at `position` — rather than copying it: input items may hold whole images.
-- Written with the response (an id met again points at its latest response); gone with it.
create table stored_response_items (
  project_id uuid not null,
  id text not null,
  response_id text not null references stored_responses (id) on delete cascade,
  place text not null check (place in ('input', 'output')),
  position integer not null,
  primary key (project_id, id)
);
create index stored_response_items_response on stored_response_items (response_id);
