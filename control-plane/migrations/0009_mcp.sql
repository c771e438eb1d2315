-- The MCP gateway: a project's MCP setting (which servers and tools its keys may use; null, the
-- default, is none), and on audit events the MCP request's server, tool and method as one object
-- ({"server","tool","method"}; null for every other event). Both nullable without a default: no
-- table rewrite, instant on any number of rows.
alter table projects add column mcp jsonb;

alter table audit_events add column mcp jsonb;
