-- tools_task_runtimes: the task tools of the Mastra harness, AgentScope's PlanNotebook and Kiro CLI over
-- the one store: their exact schemas, results and texts (todo.call_mcp), ids kept stable,
-- their rules (one task in progress; a plan's subtasks in order), every refusal with nothing
-- written, another tenant's lists unseen, and their lists read back through other dialects.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT (r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END
    FROM todo.call_mcp(tool, args) r $$;
CREATE FUNCTION pg_temp.rows(conv text) RETURNS TABLE (subject text, status text, external_id text, outcome text,
                                                       archived boolean) LANGUAGE sql AS $$
  SELECT subject, status, external_id, outcome, archived_at IS NOT NULL FROM todo.todos
   WHERE tenant_id = 'acme' AND conversation_id = conv ORDER BY position, id $$;
-- a text's timestamps (AgentScope prints them) as <time>
CREATE FUNCTION pg_temp.untimed(t text) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(t, '\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}', '<time>', 'g') $$;

-- ========== the catalog ==========
SELECT t->'_meta'->>'pg_todos/dialect' AS dialect, t->>'name' AS name
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' IN ('mastra', 'agentscope', 'kiro');
SELECT t->>'name' AS name, t->'inputSchema' AS schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' = 'mastra';
SELECT t->'inputSchema'->'properties'->'subtasks' AS create_plan_subtasks, t->'inputSchema'->'$defs'->'SubTask'->'required' AS required
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'create_plan';

-- ========== Mastra: task_write, task_update, task_complete, task_check ==========
SELECT FROM todo.set_context('acme', 'mastra-thread', 'mastra@1', 'turn-1');
SELECT pg_temp.said('task_check', '{}');
SELECT pg_temp.said('task_write', '{"tasks": [
  {"content": "Investigate issue", "status": "completed", "activeForm": "Investigating issue"},
  {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
  {"id": "docs", "content": "Update docs", "status": "pending", "activeForm": "Updating docs"}]}');
SELECT * FROM pg_temp.rows('mastra-thread');
-- a rewrite without ids keeps them (one stored task of each content)
SELECT pg_temp.said('task_write', '{"tasks": [
  {"content": "Investigate issue", "status": "completed", "activeForm": "Investigating issue"},
  {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
  {"content": "Update docs", "status": "in_progress", "activeForm": "Updating docs"},
  {"content": "Write tests", "status": "pending", "activeForm": "Writing more tests"}]}');
SELECT pg_temp.said('task_update', '{"id": "task_write_tests_2", "content": "Write the edge-case tests", "status": "in_progress"}');
SELECT pg_temp.said('task_update', '{"id": "docs", "status": "pending"}');
SELECT pg_temp.said('task_update', '{"id": "task_write_tests_2", "status": "in_progress", "activeForm": "Writing the edge-case tests"}');
SELECT pg_temp.said('task_complete', '{"id": "docs"}');
SELECT pg_temp.said('task_check', '{}');
SELECT todo.call('task_check', '{}') - 'content' AS check_object;
-- refusals write nothing: two in progress, an unknown id, nothing to update, a blank content
SELECT pg_temp.said('task_write', '{"tasks": [{"content": "a", "status": "in_progress", "activeForm": "A"},
  {"content": "b", "status": "in_progress", "activeForm": "B"}]}');
SELECT pg_temp.said('task_complete', '{"id": "missing"}');
SELECT pg_temp.said('task_update', '{"id": "docs"}');
SELECT pg_temp.said('task_write', '{"tasks": [{"content": " ", "status": "pending", "activeForm": "x"}]}');
SELECT pg_temp.said('task_write', '{"tasks": [{"content": "x", "status": "done", "activeForm": "x"}]}');
SELECT * FROM pg_temp.rows('mastra-thread');
-- its list through Cursor's ids and Codex's plan; Cursor's ids are Mastra's
SELECT todo.list_as('mastra', 'mastra-thread');
SELECT todo.list_as('cursor', 'mastra-thread');
SELECT pg_temp.said('cursor/todo_write', '{"merge": true, "todos": [{"id": "task_write_tests_2", "status": "completed"}]}') IS NOT NULL AS written;
SELECT pg_temp.said('task_check', '{}');
-- an empty list clears it: finished tasks archived, open ones deleted
SELECT pg_temp.said('task_write', '{"tasks": []}');
SELECT * FROM pg_temp.rows('mastra-thread');
-- no list in context
SELECT FROM todo.set_context('acme', NULL, 'mastra@1', 'turn-1');
SELECT pg_temp.said('task_write', '{"tasks": []}');
SELECT pg_temp.said('task_check', '{}');

-- ========== AgentScope: PlanNotebook ==========
SELECT FROM todo.set_context('acme', 'agentscope-run', 'react@1', 'turn-1');
SELECT pg_temp.said('view_subtasks', '{"subtask_idx": [0]}');
SELECT pg_temp.said('finish_plan', '{"state": "done", "outcome": "x"}');
SELECT pg_temp.said('view_historical_plans', '{}') AS no_history;
SELECT pg_temp.said('create_plan', '{"name": "Ship the parser", "description": "Fix and release the parser",
  "expected_outcome": "A release with the fix", "subtasks": [
    {"name": "Reproduce", "description": "Reproduce the bug", "expected_outcome": "A failing test"},
    {"name": "Fix", "description": "Fix the escape branch", "expected_outcome": "The test passes"},
    {"name": "Release", "description": "Tag and publish", "expected_outcome": "Version 1.2.1 on the registry"}]}');
SELECT * FROM pg_temp.rows('agentscope-run');
-- in order: the second cannot start or finish before the first
SELECT pg_temp.said('update_subtask_state', '{"subtask_idx": 1, "state": "in_progress"}');
SELECT pg_temp.said('finish_subtask', '{"subtask_idx": 1, "subtask_outcome": "x"}');
SELECT pg_temp.said('update_subtask_state', '{"subtask_idx": 0, "state": "in_progress"}');
SELECT pg_temp.said('update_subtask_state', '{"subtask_idx": 0, "state": "in_progress"}');
SELECT pg_temp.said('update_subtask_state', '{"subtask_idx": 7, "state": "todo"}');
-- finishing one starts the next
SELECT pg_temp.said('finish_subtask', '{"subtask_idx": 0, "subtask_outcome": "tests/escape.rs fails on main"}');
SELECT pg_temp.untimed(pg_temp.said('view_subtasks', '{"subtask_idx": [0, 1, 9]}'));
SELECT pg_temp.said('revise_current_plan', '{"subtask_idx": 2, "action": "add", "subtask": {"name": "Changelog", "description": "Write the entry", "expected_outcome": "CHANGELOG.md has it"}}');
SELECT pg_temp.said('revise_current_plan', '{"subtask_idx": 9, "action": "add", "subtask": {"name": "x", "description": "x", "expected_outcome": "x"}}');
SELECT pg_temp.said('revise_current_plan', '{"subtask_idx": 1, "action": "revise"}');
SELECT pg_temp.said('revise_current_plan', '{"subtask_idx": 1, "action": "bogus"}');
SELECT pg_temp.said('revise_current_plan', '{"subtask_idx": 3, "action": "delete"}');
SELECT pg_temp.untimed(todo.list_as('agentscope', 'agentscope-run') #>> '{}');
SELECT * FROM pg_temp.rows('agentscope-run');
-- the plan read through Claude Code's TodoWrite and Codex's plan (its subtasks are todos of the list)
SELECT todo.list_as('claude-todowrite', 'agentscope-run');
SELECT todo.list_as('codex', 'agentscope-run');
-- finished, it is history; a new plan; the old one recovered
SELECT pg_temp.said('finish_plan', '{"state": "done", "outcome": "1.2.1 released"}');
SELECT pg_temp.said('create_plan', '{"name": "Write the post", "description": "Announce it", "expected_outcome": "A post", "subtasks": []}');
SELECT pg_temp.said('create_plan', '{"name": "Write the post again", "description": "Announce it", "expected_outcome": "A post", "subtasks": [{"name": "Draft", "description": "d", "expected_outcome": "a draft", "state": "in_progress"}]}');
SELECT pg_temp.untimed(pg_temp.said('view_historical_plans', '{}'));
SELECT id AS plan_id FROM todo.todos WHERE tenant_id = 'acme' AND subject = 'Ship the parser' \gset
SELECT pg_temp.said('recover_historical_plan', jsonb_build_object('plan_id', :'plan_id'::text)) = 'The current plan named ''Write the post again'' is replaced by the historical plan named ''Ship the parser'' with ID ''' || :'plan_id' || '''.' AS recovered;
SELECT pg_temp.said('recover_historical_plan', '{"plan_id": "nope"}');
SELECT * FROM pg_temp.rows('agentscope-run');
-- refusals: a plan's fields by the schema, nothing written
SELECT pg_temp.said('create_plan', '{"name": "x", "description": "d", "expected_outcome": "e", "subtasks": [{"name": "only"}]}');
SELECT count(*) AS todos FROM pg_temp.rows('agentscope-run');

-- ========== Kiro CLI: todo_list ==========
SELECT FROM todo.set_context('acme', 'kiro-project', 'kiro@1', 'turn-1');
SELECT pg_temp.said('todo_list', '{"command": "lookup"}');
-- a list's id is the time in milliseconds: shown as <id>
CREATE FUNCTION pg_temp.kiro(args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(pg_temp.said('todo_list', args), '\d{13}', '<id>', 'g') $$;
SELECT pg_temp.kiro('{"command": "create", "todo_list_description": "Refactor the parser",
  "tasks": ["Read parse.rs", "Split the lexer", "Run the tests"]}');
SELECT metadata->>'kiro_list' AS list_id FROM todo.todos WHERE tenant_id = 'acme' AND subject = 'Refactor the parser' \gset
SELECT pg_temp.kiro(jsonb_build_object('command', 'complete', 'current_id', :'list_id'::text, 'completed_indices', '[0]'::jsonb,
  'context_update', 'parse.rs mixes lexing and parsing', 'modified_files', '["src/parse.rs"]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'add', 'current_id', :'list_id'::text, 'new_tasks', '["Write the lexer tests", "Update the docs"]'::jsonb,
  'insert_indices', '[2, 3]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'remove', 'current_id', :'list_id'::text, 'remove_indices', '[4]'::jsonb,
  'new_description', 'Refactor the parser into a lexer and a parser'));
SELECT pg_temp.kiro(jsonb_build_object('command', 'load', 'load_id', :'list_id'::text));
SELECT pg_temp.kiro('{"command": "lookup"}');
-- the work log is the completed task's outcome too: its event keeps it
SELECT e.changes->'outcome' AS logged FROM todo.events e JOIN todo.todos t ON t.tenant_id = e.tenant_id AND t.id = e.todo_id
 WHERE t.tenant_id = 'acme' AND t.subject = 'Read parse.rs' AND e.changes ? 'outcome';
SELECT * FROM pg_temp.rows('kiro-project');
-- refusals, in Kiro's words, write nothing
SELECT pg_temp.kiro('{}');
SELECT pg_temp.kiro('{"command": "Create"}');
SELECT pg_temp.kiro('{"command": "create", "tasks": ["x"]}');
SELECT pg_temp.kiro('{"command": "create", "tasks": [], "todo_list_description": "d"}');
SELECT pg_temp.kiro('{"command": "create", "tasks": [" "], "todo_list_description": "d"}');
SELECT pg_temp.kiro('{"command": "create", "tasks": ["x"], "todo_list_description": ""}');
SELECT pg_temp.kiro(jsonb_build_object('command', 'complete', 'current_id', :'list_id'::text, 'completed_indices', '[-1]'::jsonb, 'context_update', 'x'));
SELECT pg_temp.kiro(jsonb_build_object('command', 'complete', 'current_id', :'list_id'::text, 'completed_indices', '[]'::jsonb, 'context_update', 'x'));
SELECT pg_temp.kiro(jsonb_build_object('command', 'complete', 'current_id', :'list_id'::text, 'completed_indices', '[1]'::jsonb, 'context_update', ''));
SELECT pg_temp.kiro(jsonb_build_object('command', 'complete', 'current_id', :'list_id'::text, 'completed_indices', '[1, 9]'::jsonb, 'context_update', 'x'));
SELECT pg_temp.kiro(jsonb_build_object('command', 'add', 'current_id', :'list_id'::text, 'new_tasks', '["a", "b"]'::jsonb, 'insert_indices', '[0, 0]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'add', 'current_id', :'list_id'::text, 'new_tasks', '["a"]'::jsonb, 'insert_indices', '[0, 1]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'add', 'current_id', :'list_id'::text, 'new_tasks', '["a"]'::jsonb, 'insert_indices', '[9]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'remove', 'current_id', :'list_id'::text, 'remove_indices', '[0, 0]'::jsonb));
SELECT pg_temp.kiro(jsonb_build_object('command', 'remove', 'current_id', :'list_id'::text, 'remove_indices', '[0]'::jsonb, 'new_description', ' '));
SELECT pg_temp.kiro('{"command": "load", "load_id": "1234"}');
SELECT pg_temp.kiro('{"command": "complete", "current_id": 1, "completed_indices": [0], "context_update": "x"}');
SELECT * FROM pg_temp.rows('kiro-project');
-- the list read back as Kiro keeps it and through Claude Code's TodoWrite
SELECT regexp_replace(todo.list_as('kiro', 'kiro-project')::text, '\d{13}', '<id>', 'g') AS kiro_lists;
SELECT todo.list_as('claude-todowrite', 'kiro-project');
SELECT todo.list_as('codex', 'kiro-project');

-- ========== another tenant sees none of it ==========
SELECT FROM todo.set_context('globex', 'agentscope-run', 'react@1', 'turn-1');
SELECT pg_temp.said('view_subtasks', '{"subtask_idx": [0]}');
SELECT pg_temp.said('recover_historical_plan', jsonb_build_object('plan_id', :'plan_id'::text)) = 'Cannot find the plan with ID ''' || :'plan_id' || '''.' AS not_found;
SELECT FROM todo.set_context('globex', 'mastra-thread', 'mastra@1', 'turn-1');
SELECT pg_temp.said('task_complete', '{"id": "docs"}');
SELECT FROM todo.set_context('globex', 'kiro-project', 'kiro@1', 'turn-1');
SELECT pg_temp.said('todo_list', '{"command": "lookup"}');
SELECT pg_temp.said('todo_list', jsonb_build_object('command', 'load', 'load_id', :'list_id'::text));
rollback;
