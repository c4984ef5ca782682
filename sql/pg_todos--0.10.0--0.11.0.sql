-- pg_todos 0.10.0 -> 0.11.0: a dialect is one declaration. todo.dialects() lists the tool
-- dialects (name, earlier names, runtime, description, tools, list shape); the comments that
-- named every dialect point to it instead, so a new dialect changes no upgrade script.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.11.0'" to load this file. \quit

CREATE FUNCTION todo."dialects"() RETURNS TABLE (
	"name" TEXT,  /* String */
	"aliases" TEXT[],  /* Vec < String > */
	"runtime" TEXT,  /* String */
	"description" TEXT,  /* String */
	"tools" TEXT[],  /* Vec < String > */
	"list_shape" TEXT  /* Option < String > */
)
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dialects_wrapper';
COMMENT ON FUNCTION todo.dialects() IS
    'Every tool dialect, in catalog order: its name (for pg_todos mcp --tools, /mcp?tools= and todo.call(''dialect/tool'', ...)), earlier names still accepted, the runtime or tracker it speaks for, what its tools do, their names, and the shape todo.list_as reads a list in (NULL: none). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.dialects() FROM PUBLIC;

COMMENT ON FUNCTION todo.tools() IS
    'Every tool of every dialect (todo.dialects() lists them) as MCP tool objects {name, description, inputSchema, _meta: {"pg_todos/dialect"}}, in catalog order. Raises nothing.';
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a dialect''s shape: todo.dialects() lists the dialects that have one (list_shape) and what it is.';

-- The roles granted so far get the new function.
SELECT todo.grant_usage(r.role, r.tenant_id, r.plain_sql) FROM todo.roles r ORDER BY r.role::oid;
