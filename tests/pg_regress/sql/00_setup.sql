-- 00_setup: install the extension and the roles every other test uses.
-- Runs first and is not rolled back; bin/installcheck starts each run on a fresh cluster.
-- (IF NOT EXISTS: an upgrade run has already created it at 0.1.0 and updated it.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_todos;
RESET client_min_messages;
-- (not \dx: its columns differ between psql versions)
SELECT e.extname, e.extversion, e.extnamespace::regnamespace AS schema, obj_description(e.oid, 'pg_extension') AS description
  FROM pg_extension e WHERE e.extname = 'pg_todos';
-- A plain login role: not superuser, no BYPASSRLS, owns nothing. RLS tests log in as it.
CREATE ROLE agent_login LOGIN;
SELECT todo.grant_usage('agent_login');
SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'agent_login';
-- A login role with no grants at all: the open block must still not raise for it.
CREATE ROLE nogrant_login LOGIN;
