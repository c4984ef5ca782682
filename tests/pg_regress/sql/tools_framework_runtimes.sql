-- tools_framework_runtimes: the todo tools of Codebuff, pydantic-ai-todo and Factory Droid over
-- the one store: their exact schemas, results and the text each runtime's model reads
-- (todo.call_mcp), every refusal with nothing written, another tenant's lists unseen, and
-- lists written through one dialect read back through others.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
-- the text the model reads, and whether it is an error, for one call of one dialect's tool
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT (r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END
    FROM todo.call_mcp(tool, args) r $$;
-- a conversation's todos as stored
CREATE FUNCTION pg_temp.rows(conv text) RETURNS TABLE (subject text, status text, active_form text, archived boolean)
LANGUAGE sql AS $$
  SELECT subject, status, active_form, archived_at IS NOT NULL FROM todo.todos
   WHERE tenant_id = 'acme' AND conversation_id = conv ORDER BY position, id $$;

-- ========== the catalog: each runtime's names and exact schemas ==========
SELECT t->'_meta'->>'pg_todos/dialect' AS dialect, t->>'name' AS name
  FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' IN ('codebuff', 'pydantic-ai', 'droid');
SELECT t->'inputSchema' = '{"type": "object", "required": ["todos"], "properties": {"todos": {"type": "array",
  "items": {"type": "object", "required": ["task", "completed"], "properties": {
    "task": {"type": "string", "description": "Description of the task"},
    "completed": {"type": "boolean", "description": "Whether the task is completed"}}},
  "description": "List of todos with their completion status. Add ALL of the applicable tasks to the list, so you don''t forget to do anything. Try to order the todos the same way you will complete them. Do not mark todos as completed if you have not completed them yet!"}},
  "description": "Write a todo list to track tasks for multi-step implementations. Use this frequently to maintain an updated step-by-step plan."}'::jsonb
       AS codebuff_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' = 'codebuff';
SELECT t->>'name' AS name, t->'inputSchema' AS schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' IN ('pydantic-ai', 'droid');

-- ========== pydantic-ai-todo: write_todos, read_todos ==========
SELECT FROM todo.set_context('acme', 'pydantic-run', 'deep@1', 'turn-1');
SELECT pg_temp.said('read_todos', '{}');
SELECT pg_temp.said('pydantic-ai/write_todos', '{"todos": [
  {"content": "Read the issue", "status": "completed", "active_form": "Reading the issue"},
  {"content": "Fix the parser", "status": "in_progress", "active_form": "Fixing the parser"},
  {"content": "Add a test", "status": "pending", "active_form": "Adding a test"}]}');
SELECT pg_temp.said('read_todos', '{}');
SELECT * FROM pg_temp.rows('pydantic-run');
-- refusals write nothing: a blank content, a status it does not have, a missing active_form
SELECT pg_temp.said('pydantic-ai/write_todos', '{"todos": [{"content": " ", "status": "pending", "active_form": "x"}]}');
SELECT pg_temp.said('pydantic-ai/write_todos', '{"todos": [{"content": "x", "status": "done", "active_form": "x"}]}');
SELECT pg_temp.said('pydantic-ai/write_todos', '{"todos": [{"content": "x", "status": "pending"}]}');
SELECT pg_temp.said('read_todos', '{"extra": 1}');
SELECT count(*) AS todos FROM pg_temp.rows('pydantic-run');
-- the list read back through Claude Code's TodoWrite shape and Codex's plan
SELECT todo.list_as('claude-todowrite', 'pydantic-run');
SELECT todo.list_as('codex', 'pydantic-run');

-- ========== Codebuff: write_todos {task, completed} ==========
SELECT FROM todo.set_context('acme', 'codebuff-run', 'codebuff@1', 'turn-1');
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "Plan the change", "completed": true},
  {"task": "Write the code", "completed": false}, {"task": "Run the tests", "completed": false}]}');
-- an item not completed keeps the status another dialect gave it
SELECT pg_temp.said('claude-todowrite/TodoWrite', '{"todos": [{"content": "Plan the change", "status": "completed", "activeForm": "Planning"},
  {"content": "Write the code", "status": "in_progress", "activeForm": "Writing the code"}, {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]}');
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "Plan the change", "completed": true},
  {"task": "Write the code", "completed": false}, {"task": "Run the tests", "completed": false}, {"task": "Open the PR", "completed": false}]}');
SELECT * FROM pg_temp.rows('codebuff-run');
-- a finished item left out is archived, an open one deleted
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "Write the code", "completed": true}]}');
SELECT * FROM pg_temp.rows('codebuff-run');
SELECT todo.list_as('codebuff', 'codebuff-run');
-- refusals write nothing
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "", "completed": false}]}');
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "x", "completed": "yes"}]}');
SELECT pg_temp.said('codebuff/write_todos', '{"todos": [{"task": "x"}]}');
SELECT pg_temp.said('codebuff/write_todos', '{}');
SELECT count(*) AS todos FROM pg_temp.rows('codebuff-run');

-- ========== Factory Droid: TodoWrite, a markdown string or an array ==========
SELECT FROM todo.set_context('acme', 'droid-run', 'droid@1', 'turn-1');
SELECT pg_temp.said('droid/TodoWrite', '{"todos": "1. [completed] Scaffold\n2. [in_progress] Wire the API\n3. [pending] Test\n\n4. Ship"}');
SELECT * FROM pg_temp.rows('droid-run');
-- the array shape; a [status] at the start of a pending item's content is its status
SELECT pg_temp.said('droid/TodoWrite', '{"todos": [{"content": "Scaffold", "status": "completed"},
  {"content": "[completed] Wire the API", "status": "pending"}, {"content": "Test", "status": "in_progress"}, {"content": "Ship"}]}');
SELECT * FROM pg_temp.rows('droid-run');
SELECT todo.list_as('droid', 'droid-run');
-- refusals write nothing: a line that is no item, a blank task, a status it does not have, not a list
SELECT pg_temp.said('droid/TodoWrite', '{"todos": "1. [completed] Scaffold\n- [ ] Test"}');
SELECT pg_temp.said('droid/TodoWrite', '{"todos": "1. [pending]  "}');
SELECT pg_temp.said('droid/TodoWrite', '{"todos": [{"content": "x", "status": "done"}]}');
SELECT pg_temp.said('droid/TodoWrite', '{"todos": {"content": "x"}}');
SELECT * FROM pg_temp.rows('droid-run');
-- read back through pydantic-ai-todo and Codebuff
SELECT pg_temp.said('read_todos', '{}');
SELECT todo.list_as('codebuff', 'droid-run');

-- ========== another tenant sees none of it ==========
SELECT FROM todo.set_context('globex', 'droid-run', 'droid@1', 'turn-1');
SELECT pg_temp.said('read_todos', '{}');
SELECT todo.list_as('droid', 'droid-run'), todo.list_as('codebuff', 'codebuff-run');
-- a session is needed
SELECT FROM todo.set_context('acme', NULL, 'droid@1', 'turn-1');
SELECT pg_temp.said('droid/TodoWrite', '{"todos": "1. [pending] x"}');
SELECT pg_temp.said('read_todos', '{}');
rollback;
