-- Run last: every function of schema todo was created with EXECUTE for PUBLIC. The functions
-- that act on todos run as the extension's owner (SECURITY DEFINER, a pinned search_path),
-- so only the roles todo.grant_usage granted may call them; the four that only read the
-- context (column defaults and row-level security policies call them) stay PUBLIC's.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA todo FROM PUBLIC;
-- the trigger functions (sql/bootstrap.sql): no one's to call, PostgreSQL runs them
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA todo_internal FROM PUBLIC;
GRANT EXECUTE ON FUNCTION todo.current_tenant(), todo.current_conversation(), todo.current_agent(), todo.current_turn() TO PUBLIC;
