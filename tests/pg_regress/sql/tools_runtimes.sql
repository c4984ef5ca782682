-- tools_runtimes: the agent runtimes' todo tools (Claude Code's TaskCreate/TaskGet/
-- TaskList/TaskUpdate and TodoWrite, Codex's update_plan, Gemini's write_todos, Cursor's
-- todo_write, Roo's update_todo_list) over the one store: their exact schemas, results and
-- the text each runtime's model reads (todo.call_mcp), every refusal with nothing written,
-- another tenant's ids answered like missing ones, and one list written through one
-- dialect read back through the others.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
SELECT todo.set_context('acme', 'project:/src/app', 'claude@s1') \gset
-- the text the model reads, and whether it is an error, for one call
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT (r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END
    FROM todo.call_mcp(tool, args) r $$;
CREATE FUNCTION pg_temp.rows() RETURNS TABLE (id bigint, subject text, status text, owner text, metadata jsonb,
                                             external_id text, archived boolean) LANGUAGE sql AS $$
  SELECT id, subject, status, owner, metadata, external_id, archived_at IS NOT NULL FROM todo.todos
   WHERE tenant_id = 'acme' AND conversation_id = 'project:/src/app' ORDER BY id $$;

-- ========== the catalog: each runtime's exact input schema ==========
SELECT t->'inputSchema' = '{"type": "object", "additionalProperties": false, "required": ["subject", "description"],
 "properties": {
   "subject":     {"type": "string", "description": "A brief title for the task"},
   "description": {"type": "string", "description": "What needs to be done"},
   "activeForm":  {"type": "string", "description": "Present continuous form shown in spinner when in_progress (e.g., \"Running tests\")"},
   "metadata":    {"type": "object", "additionalProperties": true, "description": "Arbitrary metadata to attach to the task"}}}' AS task_create_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'TaskCreate';
SELECT t->'inputSchema' = '{"type": "object", "additionalProperties": false, "required": ["taskId"],
 "properties": {
   "taskId":       {"type": "string", "description": "The ID of the task to update"},
   "subject":      {"type": "string"},
   "description":  {"type": "string"},
   "activeForm":   {"type": "string"},
   "status":       {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"]},
   "addBlocks":    {"type": "array", "items": {"type": "string"}, "description": "Task IDs that this task blocks"},
   "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Task IDs that block this task"},
   "owner":        {"type": "string"},
   "metadata":     {"type": "object", "description": "Metadata keys to merge into the task. Set a key to null to delete it."}}}' AS task_update_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'TaskUpdate';
SELECT t->>'name' AS name, t->'inputSchema' AS schema FROM jsonb_array_elements(todo.tools()) t
 WHERE t->>'name' IN ('TaskList', 'TaskGet');
SELECT t->'inputSchema' = '{"type": "object", "additionalProperties": false, "required": ["plan"],
   "properties": {
     "explanation": {"type": "string"},
     "plan": {"type": "array", "description": "The list of steps",
       "items": {"type": "object", "additionalProperties": false, "required": ["step", "status"],
         "properties": {"step": {"type": "string"},
                        "status": {"type": "string", "description": "One of: pending, in_progress, completed"}}}}}}'
       AND t->>'description' = E'Updates the task plan.\nProvide an optional explanation and a list of plan items, each with a step and status.\nAt most one step can be in_progress at a time.\n'
       AS update_plan_schema_and_description
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'update_plan' AND t->'_meta'->>'pg_todos/dialect' = 'codex';
SELECT t->'inputSchema' = '{"type": "object", "additionalProperties": false, "required": ["todos"],
   "properties": {"todos": {"type": "array",
     "description": "The complete list of todo items. This will replace the existing list.",
     "items": {"type": "object", "additionalProperties": false, "required": ["description", "status"],
       "properties": {"description": {"type": "string", "description": "The description of the task."},
                      "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled", "blocked"]}}}}}}' AS write_todos_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'write_todos' AND t->'_meta'->>'pg_todos/dialect' = 'gemini';
SELECT t->'inputSchema' = '{"type": "object", "required": ["merge", "todos"], "properties": {
  "merge": {"type": "boolean", "description": "If true, the todos will be merged into the existing todos based on the id field. You can leave unchanged properties undefined. If false, the new todos will replace the existing todos."},
  "todos": {"type": "array", "minItems": 2, "items": {"type": "object", "required": ["content", "status", "id"],
    "properties": {"content": {"type": "string"},
                   "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]},
                   "id": {"type": "string"}}}}}}' AS todo_write_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'todo_write' AND t->'_meta'->>'pg_todos/dialect' = 'cursor';
SELECT t->'inputSchema' AS todowrite_schema FROM jsonb_array_elements(todo.tools()) t
 WHERE t->>'name' = 'TodoWrite' AND t->'_meta'->>'pg_todos/dialect' = 'claude-todowrite';
SELECT t->'inputSchema' AS update_todo_list_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'update_todo_list';

-- ========== Claude Code's task tools ==========
SELECT pg_temp.said('TaskList', '{}') AS empty_list;
SELECT todo.call('TaskList', '{}');
SELECT todo.call('TaskCreate', '{"subject": "Write the migration", "description": "Add the column", "activeForm": "Writing the migration"}');
SELECT pg_temp.said('TaskCreate', '{"subject": "Run the tests", "description": "All of them"}')
     = 'Task #2 created successfully: Run the tests' AS created_text;
SELECT todo.call_mcp('TaskCreate', '{"subject": "Deploy", "description": "", "metadata": {"team": "ops", "gone": null}}');
SELECT todo.call('TaskCreate', '{"subject": "bookkeeping", "description": "", "metadata": {"_internal": true}}');
-- refusals: a strict schema, a blank subject; nothing written
SELECT todo.call('TaskCreate', '{"subject": "x"}');
SELECT todo.call('TaskCreate', '{"subject": "x", "description": "", "priority": "high"}');
SELECT pg_temp.said('TaskCreate', '{"subject": "  ", "description": ""}');
SELECT count(*) AS tasks FROM pg_temp.rows();
-- start one: no owner given, so the agent that starts it owns it
SELECT todo.call('TaskUpdate', '{"taskId": "1", "status": "in_progress"}');
SELECT pg_temp.said('TaskUpdate', '{"taskId": "1", "status": "in_progress"}') AS nothing_changed;
-- dependencies, both sides, duplicates ignored
SELECT todo.call('TaskUpdate', '{"taskId": "2", "addBlockedBy": ["1", "1"]}');
SELECT pg_temp.said('TaskUpdate', '{"taskId": "3", "addBlockedBy": ["2"], "owner": "ops-bot", "metadata": {"env": "prod", "team": null}}')
     = 'Updated task #3 owner, metadata, blockedBy' AS updated_text;
SELECT todo.call('TaskUpdate', '{"taskId": "1", "addBlocks": ["2"]}') AS duplicate_edge;
-- a cycle, an unknown task, a task of the list blocking itself: refused as a normal result, nothing written
SELECT todo.call_mcp('TaskUpdate', '{"taskId": "1", "addBlockedBy": ["3"], "subject": "renamed"}');
SELECT todo.call('TaskUpdate', '{"taskId": "1", "addBlocks": ["99"]}');
SELECT todo.call('TaskUpdate', '{"taskId": "2", "addBlocks": ["2"]}');
SELECT todo.call('TaskUpdate', '{"taskId": "2", "status": "blocked"}');
SELECT subject FROM pg_temp.rows() WHERE id = 1;
SELECT todo_id, depends_on FROM todo.dependencies WHERE tenant_id = 'acme' ORDER BY 1, 2;
-- the model's view: unresolved blockers only, owners, internal tasks hidden
SELECT pg_temp.said('TaskList', '{}');
SELECT todo.call('TaskList', '{}');
SELECT pg_temp.said('TaskGet', '{"taskId": "2"}');
SELECT todo.call('TaskGet', '{"taskId": "2"}');
SELECT todo.call('TaskUpdate', '{"taskId": "1", "status": "completed"}');
SELECT pg_temp.said('TaskList', '{}') AS blocker_resolved;
-- completed back to in_progress: Claude Code allows it (the store reopens first)
SELECT todo.call('TaskUpdate', '{"taskId": "1", "status": "in_progress"}');
SELECT todo.call('TaskUpdate', '{"taskId": "1", "status": "completed"}') ->> 'success' AS done_again;
-- metadata merged key by key, null removes
SELECT metadata FROM pg_temp.rows() WHERE id = 3;
-- a missing task: a normal result, not a tool error
SELECT todo.call_mcp('TaskUpdate', '{"taskId": "99", "status": "completed"}');
SELECT todo.call_mcp('TaskGet', '{"taskId": "abc"}');
-- deleted: the task goes, and its id leaves the others' blocks and blockedBy
SELECT todo.call('TaskUpdate', '{"taskId": "2", "status": "deleted"}');
SELECT todo.call('TaskGet', '{"taskId": "3"}') -> 'task' -> 'blockedBy' AS blocked_by_after_delete;
SELECT todo.call('TaskGet', '{"taskId": "1"}') -> 'task' -> 'blocks' AS blocks_after_delete;
-- ids are never reused
SELECT todo.call('TaskCreate', '{"subject": "After the delete", "description": ""}');
-- the history records owner and metadata changes
SELECT version, changes FROM todo.events WHERE tenant_id = 'acme' AND todo_id = 3 ORDER BY version;

-- ========== another tenant: ids answer like missing ones ==========
SET LOCAL ROLE agent_login;
SELECT todo.set_context('globex', 'project:/src/app', 'gemini@s9') \gset
SELECT pg_temp.said('TaskGet', '{"taskId": "3"}') AS other_tenant_get;
SELECT todo.call('TaskUpdate', '{"taskId": "3", "status": "completed"}') AS other_tenant_update;
SELECT pg_temp.said('TaskList', '{}') AS other_tenant_list;
SELECT todo.call('todo_write', '{"merge": true, "todos": [{"id": "3", "status": "completed"}]}') AS other_tenant_cursor;
RESET ROLE;
SELECT status FROM todo.todos WHERE tenant_id = 'acme' AND id = 3;
SELECT todo.set_context('acme', 'project:/src/app', 'claude@s1') \gset

-- ========== one list, read through the other dialects ==========
SELECT pg_temp.said('TaskList', '{}');
SELECT todo.list_as('codex', 'project:/src/app');
SELECT todo.list_as('gemini', 'project:/src/app');
SELECT todo.list_as('cursor', 'project:/src/app');
SELECT todo.list_as('roo', 'project:/src/app') #>> '{}' AS roo_checklist;
SELECT todo.list_as('claude-todowrite', 'project:/src/app');
SELECT todo.todo_writ('/todo list');

-- ========== Gemini's write_todos: blocked and cancelled ==========
SELECT todo.set_context('acme', 'gemini-chat', 'gemini@s2') \gset
SELECT pg_temp.said('write_todos', '{"todos": [{"description": "a", "status": "in_progress"}, {"description": "b", "status": "in_progress"}]}');
SELECT pg_temp.said('write_todos', '{"todos": [{"description": " ", "status": "pending"}]}');
SELECT pg_temp.said('write_todos', '{"todos": [{"description": "a", "status": "done"}]}');
SELECT pg_temp.said('write_todos', '{"todos": ["a"]}');
SELECT pg_temp.said('write_todos', '{"todos": [{"description": "a", "status": "pending", "id": 1}]}');
SELECT count(*) AS written FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'gemini-chat';
SELECT pg_temp.said('write_todos', '{"todos": [
  {"description": "Read the issue", "status": "completed"},
  {"description": "Get the staging password", "status": "blocked"},
  {"description": "Fix the parser", "status": "in_progress"},
  {"description": "Rewrite everything", "status": "cancelled"}]}');
SELECT todo.call('write_todos', '{"todos": [{"description": "Fix the parser", "status": "in_progress"}]}');
SELECT subject, status, archived_at IS NOT NULL AS archived FROM todo.todos
 WHERE tenant_id = 'acme' AND conversation_id = 'gemini-chat' ORDER BY id;
SELECT pg_temp.said('write_todos', '{"todos": []}') AS cleared;
-- blocked through the other surfaces: the writ says blocked; a dialect without it says pending,
-- and sending pending back leaves it blocked; the ready queue never offers it
SELECT pg_temp.said('write_todos', '{"todos": [{"description": "Wait for the key", "status": "blocked"}, {"description": "Ship", "status": "pending"}]}');
SELECT todo.todo_writ('/todo list');
SELECT todo.call('todolist__get', '{}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "Wait for the key", "status": "pending", "activeForm": "Waiting"}, {"content": "Ship", "status": "pending", "activeForm": "Shipping"}]}');
SELECT subject, status FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'gemini-chat' AND archived_at IS NULL ORDER BY position;
SELECT subject FROM todo.ready(10) ORDER BY 1;
SELECT todo.list_as('gemini', 'gemini-chat');

-- ========== Claude Code's TodoWrite: completed items are history, never lost ==========
SELECT todo.set_context('acme', 'claude-chat', 'claude@s3') \gset
SELECT todo.call('TodoWrite', '{"todos": [
  {"content": "Add the endpoint", "status": "completed", "activeForm": "Adding the endpoint"},
  {"content": "Write its tests", "status": "in_progress", "activeForm": "Writing its tests"}]}');
SELECT pg_temp.said('TodoWrite', '{"todos": [{"content": "Write its tests", "status": "completed", "activeForm": "Writing its tests"}]}');
SELECT todo.call('TodoWrite', '{"todos": []}');
SELECT subject, status, archived_at IS NOT NULL AS archived FROM todo.todos
 WHERE tenant_id = 'acme' AND conversation_id = 'claude-chat' ORDER BY id;
SELECT todo.call('TodoWrite', '{"todos": [{"content": "x", "status": "done", "activeForm": "x"}]}');
SELECT todo.call('TodoWrite', '{"todos": [{"content": "x", "status": "pending", "activeForm": " "}]}');
-- an archived todo reopened through the writ is on the list again
-- (the id first: on Citus a pg_todos function in a query over todo.todos would run on a worker)
SELECT min(id) AS archived_id FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'claude-chat' \gset
SELECT todo.todo_writ('/todo reopen ' || :archived_id);
SELECT todo.list_as('claude-todowrite', 'claude-chat');
-- archived todos are on no list: OpenCode's and ACP's views of the same conversation
SELECT todo.call('todoread', '{}') -> 'metadata' -> 'todos' AS opencode_sees;
SELECT todo.acp_plan('claude-chat') -> 'entries' AS acp_sees;

-- ========== Codex's update_plan ==========
SELECT todo.set_context('acme', 'codex-thread', 'codex@s4') \gset
SELECT pg_temp.said('update_plan', '{"plan": [{"step": "a", "status": "done"}]}');
SELECT pg_temp.said('update_plan', '{"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}');
SELECT todo.call('update_plan', '{"plan": [{"step": "a", "status": "pending", "note": "x"}]}');
SELECT todo.call('update_plan', '{"explanation": "start"}');
SELECT count(*) AS written FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'codex-thread';
SELECT todo.call_mcp('update_plan', '{"explanation": "Plan the fix", "plan": [{"step": "Reproduce", "status": "completed"},
  {"step": "Fix", "status": "in_progress"}, {"step": "Test", "status": "pending"}]}');
SELECT todo.list_as('codex', 'codex-thread');
SELECT todo.call('TaskList', '{}') AS codex_plan_as_tasks;

-- ========== Cursor's todo_write: ids the caller chooses ==========
SELECT todo.set_context('acme', 'cursor-chat', 'cursor@s5') \gset
SELECT todo.call('todo_write', '{"merge": false, "todos": [{"id": "setup", "content": "Set up the DB", "status": "in_progress"},
  {"id": "api", "content": "Write the API", "status": "pending"}]}');
SELECT todo.call('todo_write', '{"merge": true, "todos": [{"id": "setup", "status": "completed"}, {"id": "ui", "content": "Build the UI", "status": "pending"}]}');
SELECT todo.call('todo_write', '{"merge": true, "todos": [{"id": "api", "content": "Write the REST API"}]}');
-- refusals: a new id with no content, an id sent twice, replace without a status; nothing written
SELECT todo.call('todo_write', '{"merge": true, "todos": [{"id": "api", "status": "in_progress"}, {"id": "docs", "status": "pending"}]}');
SELECT todo.call('todo_write', '{"merge": true, "todos": [{"id": "api", "status": "in_progress"}, {"id": "api", "status": "completed"}]}');
SELECT todo.call('todo_write', '{"merge": false, "todos": [{"id": "api", "content": "Write the API"}]}');
SELECT todo.call('todo_write', '{"todos": [{"id": "api", "status": "completed"}]}');
SELECT subject, status, external_id FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'cursor-chat' ORDER BY id;
-- replace: kept by id, a finished one left out is archived
SELECT todo.call('todo_write', '{"merge": false, "todos": [{"id": "ui", "content": "Build the UI", "status": "in_progress"},
  {"id": "api", "content": "Write the REST API", "status": "cancelled"}]}');
SELECT subject, status, external_id, archived_at IS NOT NULL AS archived FROM todo.todos
 WHERE tenant_id = 'acme' AND conversation_id = 'cursor-chat' ORDER BY id;

-- ========== Roo's update_todo_list: a checklist, forward moves only ==========
SELECT todo.set_context('acme', 'roo-task', 'roo@s6') \gset
SELECT pg_temp.said('update_todo_list', jsonb_build_object('todos', E'[x] Analyze requirements\n- [-] Design architecture\n[ ] Implement core logic\nnot an item\n[~] Review\n[] empty'));
SELECT todo.list_as('roo', 'roo-task') #>> '{}' AS checklist;
SELECT pg_temp.said('update_todo_list', jsonb_build_object('todos', E'[x] Analyze requirements\n[ ] Design architecture\n[ ] Implement core logic'));
SELECT todo.list_as('roo', 'roo-task') #>> '{}' AS unchanged;
SELECT pg_temp.said('update_todo_list', jsonb_build_object('todos', E'[x] Analyze requirements\n[x] Design architecture\n[x] Implement core logic\n[-] Review'));
SELECT todo.call('update_todo_list', '{"todos": 3}');

-- ========== the plan tools: a turn belongs to its conversation ==========
SELECT todo.set_context('acme', 'conv-a', 'supervisor', '1') \gset
SELECT todo.call('create_todo', '{"items": [{"title": "plan of conversation a"}]}') -> 'totalPending' AS a_pending;
SELECT todo.set_context('acme', 'conv-b', 'supervisor', '1') \gset
SELECT todo.call('list_todo', '{}') -> 'items' AS b_sees;
SELECT todo.call('create_todo', '{"items": [{"title": "plan of conversation b"}]}') -> 'totalPending' AS b_pending;
SELECT id AS a_id FROM todo.todos WHERE tenant_id = 'acme' AND subject = 'plan of conversation a' \gset
SELECT todo.call('complete_todo', format('{"todoId": "%s", "outcome": "x"}', :a_id)::jsonb) -> 'error' ->> 'code' AS a_from_b;

-- the store's invariants hold after all of it
SELECT * FROM todo.verify();
-- ========== todo.list_as refuses what it cannot show ==========
\set VERBOSITY terse
SELECT todo.list_as('plan', 'conv-a');
rollback;
