-- pg_todos 0.4.0 → 0.5.0: the runtimes' todo tools (Claude Code's task tools and
-- TodoWrite, Codex's update_plan, Gemini's write_todos, Cursor's todo_write, Roo's
-- update_todo_list). The store gains what they need: a blocked status, an owner, a
-- metadata object, the caller's own ids, and archived todos (history kept off the lists);
-- todo.call_mcp answers as MCP's CallToolResult; todo.list_as reads a list in a runtime's
-- shape. Each ALTER TABLE does one thing (Citus refuses several subcommands with a
-- constraint in one statement).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.5.0'" to load this file. \quit

ALTER TABLE todo.todos DROP CONSTRAINT todos_status_check;
ALTER TABLE todo.todos ADD CONSTRAINT todos_status_check
    CHECK (status IN ('pending', 'in_progress', 'completed', 'canceled', 'blocked'));
ALTER TABLE todo.todos ADD COLUMN owner text;
ALTER TABLE todo.todos ADD COLUMN metadata jsonb;
ALTER TABLE todo.todos ADD CONSTRAINT todos_metadata_check CHECK (jsonb_typeof(metadata) = 'object');
ALTER TABLE todo.todos ADD COLUMN external_id text;
ALTER TABLE todo.todos ADD CONSTRAINT todos_external_id_check CHECK (external_id <> '');
ALTER TABLE todo.todos ADD COLUMN archived_at timestamptz;
ALTER TABLE todo.todos ADD CONSTRAINT todos_archived_at_check CHECK (archived_at IS NULL OR completed_at IS NOT NULL);

COMMENT ON COLUMN todo.todos.status IS 'pending, in_progress, completed, canceled, or blocked (open, waiting on something outside the list; never claimed or ready).';
COMMENT ON COLUMN todo.todos.owner IS 'Who the todo is assigned to (Claude Code''s task owner); an assignment, not a claim.';
COMMENT ON COLUMN todo.todos.metadata IS 'The caller''s own key/values (a JSON object; Claude Code''s task metadata, merged key by key).';
COMMENT ON COLUMN todo.todos.external_id IS 'The caller''s own id for the todo, unique within its conversation (Cursor''s todo_write ids).';
COMMENT ON COLUMN todo.todos.archived_at IS 'When a whole-list writer left this finished todo off its list: kept as history, on no tool''s list; cleared by a reopen.';

-- The caller's own ids, one per todo of a conversation.
CREATE UNIQUE INDEX todos_external_id ON todo.todos (tenant_id, conversation_id, external_id)
    WHERE external_id IS NOT NULL;

CREATE FUNCTION todo.call_mcp_json(
	"tool" TEXT,
	"args" TEXT
) RETURNS jsonb
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'call_mcp_json_wrapper';

CREATE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $$ SELECT todo.call_mcp_json(tool, args::text) $$;
COMMENT ON FUNCTION todo.call_mcp(text, jsonb) IS
    'Runs one tool of todo.tools() like todo.call and returns an MCP CallToolResult: the text its runtime shows the model, the output object as structured content, and isError.';

CREATE FUNCTION todo.list_as(
	"dialect" TEXT,
	"conversation" TEXT
) RETURNS jsonb
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'list_as_wrapper';
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a runtime''s shape: claude-tasks, claude-todowrite, codex, gemini, cursor or roo.';
