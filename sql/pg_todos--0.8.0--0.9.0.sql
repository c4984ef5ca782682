-- pg_todos 0.8.0 -> 0.9.0: hardening against hostile input (roles bound to a tenant, agent and
-- app roles, the context valid only in the transaction that set it, row locks instead of
-- advisory locks, input limits, a polynomial cycle check, a bounded board and event catch-up).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.9.0'" to load this file. \quit

-- Input size limits (the todo.max_* settings, src/limits.rs). todo.call, todo.call_mcp and
-- todo.rest hand their jsonb to the library, which measures its JSON text before printing it
-- (jsonb::text in SQL would print a number such as 1e131071, 131,072 digits, whole first).
CREATE OR REPLACE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_jsonb_wrapper';
CREATE OR REPLACE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_mcp_jsonb_wrapper';
CREATE OR REPLACE FUNCTION todo.rest(method text, path text, body jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE c VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'rest_jsonb_wrapper';
