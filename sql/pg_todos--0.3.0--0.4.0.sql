-- pg_todos 0.3.0 → 0.4.0: faster writes. The event log's trigger function is Rust instead of
-- PL/pgSQL (same events), and backends remember which tenants are registered until
-- todo.tenants changes (a statement trigger tells them).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.4.0'" to load this file. \quit

-- The event log: the trigger stays, its function changes language (same name, same events).
CREATE OR REPLACE FUNCTION todo.todos_log_event()
	RETURNS TRIGGER
	LANGUAGE c
	SET search_path = pg_catalog, todo, pg_temp
	AS 'MODULE_PATHNAME', 'todos_log_event_wrapper';

-- Backends remember which tenants are registered; any change to todo.tenants makes them
-- forget (src/store/ids.rs).
CREATE FUNCTION todo.tenants_changed()
	RETURNS TRIGGER
	LANGUAGE c
	SET search_path = pg_catalog, todo, pg_temp
	AS 'MODULE_PATHNAME', 'tenants_changed_wrapper';
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants
    FOR EACH STATEMENT EXECUTE FUNCTION todo.tenants_changed();
