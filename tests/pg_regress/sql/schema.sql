-- schema: the objects CREATE EXTENSION makes, their row-level security, triggers, and the
-- pinned search_path of every function.
begin;
SELECT c.relname, c.relrowsecurity AS rls_enabled, c.relforcerowsecurity AS rls_forced
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'todo' AND c.relkind = 'r' ORDER BY 1;
SELECT tablename, policyname, cmd, roles, qual, with_check
  FROM pg_policies WHERE schemaname = 'todo' ORDER BY 1, 2;
SELECT tgname, tgrelid::regclass, tgfoid::regproc
  FROM pg_trigger WHERE tgrelid = 'todo.todos'::regclass AND NOT tgisinternal ORDER BY 1;
-- every function pins its search_path; the ones that act on todos run as the extension's
-- owner (SECURITY DEFINER, granted by todo.grant_usage), and so does todo.authenticate (it
-- reads todo.tokens, which no other role may read, to turn a token into its tenant)
SELECT p.proname, p.prosecdef, p.proconfig
  FROM pg_proc p WHERE p.pronamespace = 'todo'::regnamespace ORDER BY 1;
-- the trigger functions are no one's API: they are in the private schema todo_internal, which
-- no role but the owner may use, and no one may call them (their triggers fire for every
-- writer all the same: rls, roles)
SELECT p.proname, p.prosecdef, p.proconfig, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call
  FROM pg_proc p WHERE p.pronamespace = 'todo_internal'::regnamespace ORDER BY 1;
SELECT n.nspname, n.nspacl, has_schema_privilege('public', n.oid, 'USAGE') AS public_usage,
       has_schema_privilege('agent_login', n.oid, 'USAGE') AS agent_login_usage
  FROM pg_namespace n WHERE n.nspname IN ('todo', 'todo_internal') ORDER BY 1;
-- the tables are extension configuration: pg_dump keeps their rows
SELECT c::regclass AS dumped FROM pg_extension, unnest(extconfig) c WHERE extname = 'pg_todos' ORDER BY c::regclass::text;
-- the documented settings (registered when the library loads: any pg_todos call)
SELECT todo.current_turn();
SELECT name, setting, short_desc FROM pg_settings WHERE name LIKE 'todo.%' ORDER BY 1;
\d todo.todos
rollback;
