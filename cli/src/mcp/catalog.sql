-- The catalog `pg_todos mcp` and `/mcp` are built with (cli/src/mcp/catalog.json, written by
-- bin/catalog; listed while the database is away): the dialects' names and aliases, as
-- `--tools` resolves them, and `todo.tools()`.
CREATE EXTENSION IF NOT EXISTS pg_todos;
SELECT jsonb_pretty(jsonb_build_object(
  'dialects', (SELECT jsonb_agg(jsonb_build_object('name', name, 'aliases', aliases)) FROM todo.dialects()),
  'tools', todo.tools()));
