-- tools_more_runtimes: the todo tools of GitHub Copilot, LangChain, OpenHands, Qwen Code,
-- Goose, Hermes, Crush, Kimi, Mistral Vibe, Zed and Continue over the one store: their exact
-- schemas, results and the text each runtime's model reads (todo.call_mcp), every refusal
-- with nothing written, another tenant's lists and ids answered like missing ones, and lists
-- written through one dialect read back through others.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
-- the text the model reads, and whether it is an error, for one call of one dialect's tool
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT (r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END
    FROM todo.call_mcp(tool, args) r $$;
-- a conversation's todos as stored
CREATE FUNCTION pg_temp.rows(conv text) RETURNS TABLE (subject text, status text, priority text, description text,
                                                       external_id text, archived boolean) LANGUAGE sql AS $$
  SELECT subject, status, priority, description, external_id, archived_at IS NOT NULL FROM todo.todos
   WHERE tenant_id = 'acme' AND conversation_id = conv ORDER BY position, id $$;
-- the dependencies among a conversation's todos, by subject
CREATE FUNCTION pg_temp.waits(conv text) RETURNS TABLE (todo text, waits_for text) LANGUAGE sql AS $$
  SELECT a.subject, b.subject FROM todo.dependencies d
    JOIN todo.todos a ON a.tenant_id = d.tenant_id AND a.id = d.todo_id
    JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
   WHERE d.tenant_id = 'acme' AND a.conversation_id = conv ORDER BY 1, 2 $$;

-- ========== the catalog: each runtime's names, in its dialect ==========
SELECT t->'_meta'->>'pg_todos/dialect' AS dialect, t->>'name' AS name
  FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' IN ('copilot', 'langchain', 'openhands', 'qwen', 'goose', 'hermes', 'crush',
                                           'kimi', 'vibe', 'zed', 'continue');
-- the exact schemas the sources print (Copilot's, Qwen Code's, Goose's, Continue's)
SELECT t->'inputSchema' = '{"type": "object", "required": ["todoList"], "properties": {"todoList": {"type": "array",
   "description": "Complete array of all todo items. Must include ALL items - both existing and new.",
   "items": {"type": "object", "required": ["id", "title", "status"], "properties": {
     "id": {"type": "number", "description": "Unique identifier for the todo. Use sequential numbers starting from 1."},
     "title": {"type": "string", "description": "Concise action-oriented todo label (3-7 words). Displayed in UI."},
     "status": {"type": "string", "enum": ["not-started", "in-progress", "completed"],
                "description": "not-started: Not begun | in-progress: Currently working (max 1) | completed: Fully finished with no blockers"}}}}}}'
       AS copilot_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'manage_todo_list';
SELECT t->'inputSchema' = '{"type": "object", "required": ["todos"], "properties": {"todos": {"type": "array",
   "description": "The updated todo list", "items": {"type": "object", "required": ["content", "status", "id"],
   "additionalProperties": false, "properties": {
     "content": {"type": "string", "minLength": 1},
     "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
     "id": {"type": "string", "maxLength": 500},
     "blockedBy": {"type": "array", "items": {"type": "string", "maxLength": 500}, "uniqueItems": true,
                   "description": "Todo IDs that must be completed before this item. Active-plan updates preserve omitted dependencies for existing IDs; use [] to remove them."}}}}}}'
       AS qwen_schema
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' = 'qwen';
SELECT t->'inputSchema' AS goose_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'todo__todo_write';
SELECT t->'inputSchema' AS continue_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'Checklist';
SELECT t->'inputSchema' AS langchain_schema FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' = 'langchain';
SELECT t->'inputSchema' AS zed_schema FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' = 'zed';
SELECT t->'inputSchema' AS kimi_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'SetTodoList';
SELECT t->'inputSchema' AS crush_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'todos';

-- ========== Copilot's manage_todo_list ==========
SELECT todo.set_context('acme', 'copilot-chat', 'copilot@s1') \gset
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 1, "title": "Read the issue", "status": "completed"},
  {"id": 2, "title": "Write the fix", "status": "in-progress"}]}') AS small_list;
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 1, "title": "Read the issue", "status": "completed"},
  {"id": 2, "title": "Write the fix", "status": "completed"}, {"id": 3, "title": "Add a test", "status": "in-progress"},
  {"id": 4, "title": "Update the docs", "status": "not-started"}]}') AS three_changes;
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 4, "title": "Update the docs", "status": "completed"},
  {"id": 3, "title": "Add a test", "status": "completed"}, {"id": 2, "title": "Write the fix", "status": "completed"},
  {"id": 1, "title": "Read the issue", "status": "completed"}]}') AS four_changes;
SELECT todo.call('manage_todo_list', '{"todoList": [{"id": 1, "title": "Read the issue", "status": "completed"},
  {"id": 2, "title": "Write the fix", "status": "completed"}, {"id": 3, "title": "Add a test", "status": "in-progress"},
  {"id": 4, "title": "Update the docs", "status": "not-started"}, {"id": 5, "title": "Ship it", "status": "not-started"},
  {"id": 6, "title": "Tell the team", "status": "not-started"}, {"id": 7, "title": "Close the issue", "status": "not-started"},
  {"id": 8, "title": "Watch the logs", "status": "not-started"}, {"id": 9, "title": "Write the changelog", "status": "not-started"},
  {"id": 10, "title": "Tag the release", "status": "not-started"}, {"id": 11, "title": "Rest", "status": "not-started"}]}') -> 'warnings' AS large_list;
-- refusals, nothing written: no list, a repeated id, a blank title, a wrong status
SELECT pg_temp.said('manage_todo_list', '{}');
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 1, "title": "a", "status": "completed"}, {"id": 1, "title": "b", "status": "completed"}]}');
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 1, "title": " ", "status": "completed"}]}');
SELECT pg_temp.said('manage_todo_list', '{"todoList": [{"id": 1, "title": "a", "status": "done"}]}');
SELECT count(*) AS copilot_todos FROM pg_temp.rows('copilot-chat') WHERE NOT archived;
SELECT todo.list_as('copilot', 'copilot-chat') -> 'todoList' -> 2 AS third;

-- ========== LangChain's write_todos: one write per model turn ==========
SELECT todo.set_context('acme', 'deepagents-thread', 'langchain@s1', 'turn-1') \gset
SELECT pg_temp.said('langchain/write_todos', $$ {"todos": [{"content": "Run tests", "status": "in_progress"},
  {"content": "Fix the \"it's\" bug", "status": "in_progress"}, {"content": "Ship", "status": "pending"}]} $$) AS written;
SELECT pg_temp.said('langchain/write_todos', '{"todos": [{"content": "Run tests", "status": "completed"}]}') AS same_turn;
SELECT todo.set_context('acme', 'deepagents-thread', 'langchain@s1', 'turn-2') \gset
SELECT pg_temp.said('langchain/write_todos', '{"todos": [{"content": "Run tests", "status": "completed"},
  {"content": "Ship", "status": "in_progress"}]}') AS next_turn;
SELECT pg_temp.said('langchain/write_todos', '{"todos": [{"content": "Ship", "status": "shipped"}]}') AS bad_status;
SELECT * FROM pg_temp.rows('deepagents-thread');
-- Gemini CLI keeps the bare name
SELECT todo.call('write_todos', '{"todos": [{"content": "x", "status": "pending"}]}') -> 'error' ->> 'code' AS bare_name_is_gemini;

-- ========== OpenHands' task_tracker: notes are descriptions ==========
SELECT todo.set_context('acme', 'openhands-conv', 'openhands@s1') \gset
SELECT pg_temp.said('task_tracker', '{}') AS empty_view;
SELECT pg_temp.said('task_tracker', '{"command": "plan", "task_list": [{"title": "Reproduce the bug", "status": "done"},
  {"title": "Fix the parser", "notes": "src/parse.rs, the escape branch", "status": "in_progress"},
  {"title": "Add a regression test"}], "summary": "plan the fix"}') AS planned;
SELECT pg_temp.said('task_tracker', '{"command": "view"}') AS view;
SELECT pg_temp.said('task_tracker', '{"command": "delete"}') AS unknown_command;
SELECT pg_temp.said('task_tracker', '{"command": "plan"}') AS plan_without_list;
SELECT * FROM pg_temp.rows('openhands-conv');

-- ========== Qwen Code's todo_write: ids and real dependencies ==========
SELECT todo.set_context('acme', 'qwen-session', 'qwen@s1') \gset
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "Design the schema", "status": "in_progress", "id": "design"},
  {"content": "Write the migration", "status": "pending", "id": "migrate", "blockedBy": ["design"]},
  {"content": "Deploy", "status": "pending", "id": "deploy", "blockedBy": ["migrate", "design"]}]}') AS written;
SELECT * FROM pg_temp.waits('qwen-session');
-- omitted blockedBy keeps the dependencies while the plan is active; [] removes them
SELECT todo.call('qwen/todo_write', '{"todos": [{"content": "Design the schema", "status": "completed", "id": "design"},
  {"content": "Write the migration", "status": "in_progress", "id": "migrate"},
  {"content": "Deploy", "status": "pending", "id": "deploy", "blockedBy": []}]}') -> 'todos' AS kept;
SELECT * FROM pg_temp.waits('qwen-session');
-- every refusal, in Qwen Code's words; nothing written
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": " "}]}');
SELECT pg_temp.said('qwen/todo_write', format('{"todos": [{"content": "a", "status": "pending", "id": "%s"}]}', repeat('i', 501))::jsonb);
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "  ", "status": "pending", "id": "a"}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "done", "id": "a"}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": "a"}, {"content": "b", "status": "pending", "id": "a"}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": "a", "blockedBy": ["b", "b"]}, {"content": "b", "status": "pending", "id": "b"}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": "a", "blockedBy": ["a"]}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": "a", "blockedBy": ["zz"]}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "a", "status": "pending", "id": "a", "blockedBy": ["b"]}, {"content": "b", "status": "pending", "id": "b", "blockedBy": ["a"]}]}');
SELECT pg_temp.said('qwen/todo_write', '{"todos": "x"}');
SELECT * FROM pg_temp.rows('qwen-session');
SELECT todo.list_as('qwen', 'qwen-session');
-- a cycle through a todo off the list (a tenant-wide one) is the store's to find: refused
-- in Qwen Code's words, nothing written
SELECT todo.rest('POST', '/v1/todos', '{"subject": "Get approval", "conversation_id": null}') #> '{body,todo,id}' AS approval \gset
SELECT id AS migrate FROM todo.todos WHERE tenant_id = 'acme' AND external_id = 'migrate' \gset
SELECT id AS design FROM todo.todos WHERE tenant_id = 'acme' AND external_id = 'design' \gset
SELECT todo.block(:approval, :design) AS approval_waits_for_design;
SELECT todo.block(:migrate, :approval) AS migrate_waits_for_approval;
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "Design the schema", "status": "completed", "id": "design", "blockedBy": ["migrate"]},
  {"content": "Write the migration", "status": "in_progress", "id": "migrate", "blockedBy": []}]}') AS through_the_pool;
SELECT * FROM pg_temp.waits('qwen-session');
SELECT todo.unblock(:migrate, :approval) AS unblocked;
DELETE FROM todo.todos WHERE tenant_id = 'acme' AND id = :approval;
-- a cleared list
SELECT pg_temp.said('qwen/todo_write', '{"todos": []}') AS cleared;

-- ========== Goose's todo__todo_write: one markdown text, read back unchanged ==========
SELECT todo.set_context('acme', 'goose-session', 'goose@s1') \gset
SELECT pg_temp.said('todo__todo_write', jsonb_build_object('content',
  E'# Release 2.0\n\nNotes: ask Dana before tagging.\n\n- [x] Freeze the branch\n- [ ] Run the full suite  \n  - [ ] Check the flaky test\n\nAfter: announce.'));
SELECT * FROM pg_temp.rows('goose-session');
SELECT todo.list_as('goose', 'goose-session') #>> '{}' = E'# Release 2.0\n\nNotes: ask Dana before tagging.\n\n- [x] Freeze the branch\n- [ ] Run the full suite  \n  - [ ] Check the flaky test\n\nAfter: announce.' AS unchanged;
-- refusals in Goose's words: too long, missing; nothing written
SELECT pg_temp.said('todo__todo_write', jsonb_build_object('content', repeat('é', 50001)));
SELECT pg_temp.said('todo__todo_write', '{}');
-- a text of more checkbox lines than a list holds (1,000, as every list sent as JSON)
SELECT pg_temp.said('todo__todo_write', jsonb_build_object('content', repeat(E'- [ ] x\n', 1001)));
SELECT count(*) AS goose_todos FROM pg_temp.rows('goose-session');

-- ========== Hermes' todo: replace, merge, read, lenient ==========
SELECT todo.set_context('acme', 'hermes-session', 'hermes@s1') \gset
SELECT pg_temp.said('hermes/todo', '{"todos": [{"id": "1", "content": "Survey the code", "status": "in_progress"},
  {"id": "2", "content": "Draft the plan", "status": "PENDING"}, {"id": "3", "status": "weird"},
  {"id": "2", "content": "Draft the plan, again", "status": "pending"}]}') AS replaced;
SELECT pg_temp.said('hermes/todo', '{"merge": true, "todos": [{"id": "1", "status": "completed"},
  {"id": "3", "content": "Write it up", "status": "cancelled"}, {"content": "no id: skipped"}, {"id": "4", "content": "Ünïcode ✓"}]}') AS merged;
SELECT todo.call('hermes/todo', '{}') -> 'summary' AS read_summary;
SELECT * FROM pg_temp.rows('hermes-session');
-- a bare todo is Hermes'
SELECT todo.call('todo', '{}') -> 'summary' ->> 'total' AS bare_name_is_hermes;

-- ========== Crush's todos: snake_case, its status line ==========
SELECT todo.set_context('acme', 'crush-session', 'crush@s1') \gset
SELECT pg_temp.said('todos', '{"todos": [{"content": "Run the linter", "status": "completed", "active_form": "Running the linter"},
  {"content": "Fix the warnings", "status": "in_progress", "active_form": "Fixing the warnings"},
  {"content": "Commit", "status": "pending", "active_form": "Committing"}]}');
SELECT todo.call('todos', '{"todos": [{"content": "Run the linter", "status": "completed", "active_form": "Running the linter"},
  {"content": "Fix the warnings", "status": "completed", "active_form": "Fixing the warnings"},
  {"content": "Commit", "status": "in_progress", "active_form": "Committing"}]}');
SELECT pg_temp.said('todos', '{"todos": [{"content": "Commit", "status": "doing", "active_form": "Committing"}]}');
SELECT todo.list_as('crush', 'crush-session');

-- ========== Kimi's SetTodoList: read when todos is left out ==========
SELECT todo.set_context('acme', 'kimi-session', 'kimi@s1') \gset
SELECT pg_temp.said('SetTodoList', '{}') AS empty;
SELECT pg_temp.said('SetTodoList', '{"todos": [{"title": "Read the spec", "status": "done"}, {"title": "Write the code", "status": "in_progress"}]}') AS written;
SELECT pg_temp.said('SetTodoList', '{"todos": null}') AS read;
SELECT pg_temp.said('SetTodoList', '{"todos": [{"title": "", "status": "done"}]}') AS blank_title;
SELECT pg_temp.said('SetTodoList', '{"todos": []}') AS cleared;
SELECT pg_temp.said('SetTodoList', '{}') AS empty_again;

-- ========== Mistral Vibe's todo: read/write, priority, its limits ==========
SELECT todo.set_context('acme', 'vibe-session', 'vibe@s1') \gset
SELECT pg_temp.said('vibe/todo', '{"action": "write", "todos": [{"id": "a", "content": "Profile the query", "priority": "high"},
  {"id": "b", "content": "Add the index", "status": "in_progress"}, {"id": "c", "content": "Drop the old view", "status": "cancelled", "priority": "low"}]}') AS written;
SELECT pg_temp.said('vibe/todo', '{"action": "read"}') AS read;
SELECT pg_temp.said('vibe/todo', '{"action": "delete"}');
SELECT pg_temp.said('vibe/todo', '{"action": "write", "todos": [{"id": "a", "content": "x"}, {"id": "a", "content": "y"}]}');
SELECT pg_temp.said('vibe/todo', jsonb_build_object('action', 'write', 'todos',
  (SELECT jsonb_agg(jsonb_build_object('id', i::text, 'content', 'item ' || i)) FROM generate_series(1, 101) i)));
SELECT * FROM pg_temp.rows('vibe-session');

-- ========== Zed's update_plan: Codex's with priority ==========
SELECT todo.set_context('acme', 'zed-thread', 'zed@s1') \gset
SELECT pg_temp.said('zed/update_plan', '{"plan": [{"step": "Find the leak", "status": "in_progress", "priority": "high"},
  {"step": "Patch it", "status": "pending"}]}') AS zed;
SELECT pg_temp.said('zed/update_plan', '{"explanation": "x", "plan": []}') AS explanation_ignored_as_zed_does;
SELECT pg_temp.said('update_plan', '{"explanation": "Codex keeps the bare name", "plan": []}') AS codex;
SELECT todo.list_as('zed', 'zed-thread');

-- ========== Continue's Checklist ==========
SELECT todo.set_context('acme', 'continue-session', 'continue@s1') \gset
SELECT pg_temp.said('Checklist', jsonb_build_object('checklist', E'Plan:\n- [x] Read the code\n- [ ] Change it\n- [ ] Test it'));
SELECT * FROM pg_temp.rows('continue-session');
SELECT todo.call('Checklist', jsonb_build_object('checklist', repeat(E'- [x] y\n', 1001)));
SELECT todo.call('update_todo_list', jsonb_build_object('todos', repeat(E'[ ] z\n', 1001)));
SELECT count(*) AS unchanged FROM pg_temp.rows('continue-session');

-- ========== one list, many runtimes ==========
-- written by Copilot's tool, read by Qwen Code's shape and the writ
SELECT todo.set_context('acme', 'shared', 'copilot@s9') \gset
SELECT todo.call('manage_todo_list', '{"todoList": [{"id": 1, "title": "Collect the logs", "status": "completed"},
  {"id": 2, "title": "Find the cause", "status": "in-progress"}, {"id": 3, "title": "Write the postmortem", "status": "not-started"}]}') -> 'warnings' AS warnings;
SELECT todo.list_as('qwen', 'shared');
SELECT todo.todo_writ('/todo list');
-- Qwen Code's tool then names Copilot's ids and adds a dependency
SELECT todo.call('qwen/todo_write', '{"todos": [{"content": "Collect the logs", "status": "completed", "id": "1"},
  {"content": "Find the cause", "status": "completed", "id": "2"},
  {"content": "Write the postmortem", "status": "in_progress", "id": "3", "blockedBy": ["2"]}]}') -> 'error' AS no_error;
SELECT * FROM pg_temp.waits('shared');
SELECT todo.list_as('copilot', 'shared');
-- written by Goose's text, read by Claude Code's TaskList and Kimi's shape; changed there, read back by Goose
SELECT todo.set_context('acme', 'goose-shared', 'goose@s9') \gset
SELECT todo.call('todo__todo_write', jsonb_build_object('content', E'Sprint notes\n- [ ] Triage\n- [x] Plan\n- [ ] Build'));
SELECT pg_temp.said('TaskList', '{}') AS claude_reads;
SELECT todo.list_as('kimi', 'goose-shared');
SELECT todo.call('SetTodoList', '{"todos": [{"title": "Triage", "status": "done"}, {"title": "Plan", "status": "done"},
  {"title": "Build", "status": "in_progress"}, {"title": "Demo", "status": "pending"}]}');
SELECT todo.list_as('goose', 'goose-shared') #>> '{}' AS goose_reads;
-- written by Hermes and Vibe with ids, read by each other and OpenHands
SELECT todo.set_context('acme', 'ids-shared', 'hermes@s9') \gset
SELECT todo.call('hermes/todo', '{"todos": [{"id": "h1", "content": "Benchmark", "status": "completed"}, {"id": "h2", "content": "Tune", "status": "cancelled"}]}') -> 'summary' AS hermes_summary;
SELECT todo.list_as('vibe', 'ids-shared');
SELECT todo.list_as('openhands', 'ids-shared');
SELECT todo.list_as('zed', 'ids-shared');
SELECT todo.list_as('crush', 'ids-shared');
SELECT todo.list_as('langchain', 'ids-shared');
SELECT todo.list_as('continue', 'ids-shared') #>> '{}' AS continue_reads;

-- ========== another tenant: its lists are empty here, its ids unknown ==========
SELECT todo.set_context('globex', 'shared', 'intruder') \gset
SELECT pg_temp.said('qwen/todo_write', '{"todos": [{"content": "x", "status": "pending", "id": "y", "blockedBy": ["3"]}]}') AS unknown_there;
SELECT todo.list_as('copilot', 'shared') AS globex_sees;
SELECT todo.list_as('goose', 'goose-shared') AS globex_goose;
SELECT pg_temp.said('SetTodoList', '{}') AS globex_kimi;
SELECT pg_temp.said('hermes/todo', '{"merge": true, "todos": [{"id": "h1", "status": "pending"}]}') AS globex_merge_adds_its_own;
SELECT todo.set_context('acme', 'ids-shared', 'hermes@s9') \gset
SELECT todo.list_as('hermes', 'ids-shared') -> 'summary' AS acme_unchanged;

-- the store's invariants hold after all of it
SELECT * FROM todo.verify();
rollback;
