-- tools_backlog: Backlog.md's task tools over the store (their texts to the character are
-- test_trackers.py's replay of Backlog.md itself): acceptance criteria, definition of done and
-- authored comments as rows of todo.checklist_items and todo.comments, which plain SQL reads
-- under row-level security as an app's role (at the end, as agent_login); In Progress as
-- pg_todos' fenced claim; refusals writing nothing; another tenant's tasks answered like
-- missing ones; tasks read back through Task Master's and beads' tools, and theirs through
-- Backlog.md's.
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
\set ON_ERROR_ROLLBACK on
begin;
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(string_agg(c->>'text', E'\n-----\n') || CASE WHEN bool_or((r->>'isError')::bool) THEN '  [isError]' ELSE '' END,
         '\d{4}-\d\d-\d\d \d\d:\d\d', '<time>', 'g')
    FROM todo.call_mcp('backlog/' || tool, args) r, jsonb_array_elements(r->'content') c $$;

-- ========== the catalog ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT string_agg(t->>'name', ', ' ORDER BY n) AS tools FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, n)
 WHERE t->'_meta'->>'pg_todos/dialect' = 'backlog';
SELECT t->'inputSchema'->'required' AS create_required, t->'inputSchema'->'additionalProperties' AS closed
  FROM jsonb_array_elements(todo.tools()) t WHERE t->'_meta'->>'pg_todos/dialect' = 'backlog' AND t->>'name' = 'task_create';

-- ========== create, edit: the checkable lists and comments are rows ==========
SELECT pg_temp.said('task_create', '{"title": "Set up database", "priority": "high", "acceptanceCriteria": ["Schema exists", "Migrations run"], "definitionOfDoneAdd": ["Tests pass"]}');
SELECT pg_temp.said('task_create', '{"title": "Write API", "dependencies": ["task-1"], "assignee": ["@alice"], "type": "feature"}');
SELECT pg_temp.said('task_create', '{"title": "Create tables", "parentTaskId": "task-1"}');
SELECT pg_temp.said('task_edit', '{"id": "task-1", "acceptanceCriteriaCheck": [1], "definitionOfDoneCheck": [1], "commentsAppend": ["Schema is in", "Indexes next"], "commentAuthor": "@ada", "planSet": "one step", "notesAppend": ["n1"]}');
SELECT t.external_id, c.kind, c.position, c.text, c.checked
  FROM todo.checklist_items c JOIN todo.todos t ON t.tenant_id = c.tenant_id AND t.id = c.todo_id ORDER BY t.id, c.kind, c.position;
SELECT t.external_id, c.position, c.author, c.body
  FROM todo.comments c JOIN todo.todos t ON t.tenant_id = c.tenant_id AND t.id = c.todo_id ORDER BY t.id, c.position;
SELECT t.external_id, p.external_id AS parent, t.subject, t.status, t.priority, t.plan, t.notes, t.owner, t.issue_type, t.metadata
  FROM todo.todos t LEFT JOIN todo.todos p ON p.tenant_id = t.tenant_id AND p.id = t.parent_id ORDER BY t.id;
SELECT pg_temp.said('task_list', '{}');
SELECT pg_temp.said('task_list', '{"ready": true}');

-- ========== refusals: nothing written ==========
SELECT pg_temp.said('task_edit', '{"id": "task-1", "acceptanceCriteriaCheck": [9], "title": "not kept"}');
SELECT pg_temp.said('task_create', '{"title": "x", "dependencies": ["task-99"]}');
SELECT pg_temp.said('task_create', '{"title": "x", "bogus": 1}');
SELECT pg_temp.said('task_create', '{"title": "x", "dueDate": "tomorrow"}');
SELECT pg_temp.said('task_complete', '{"id": "task-1"}');
SELECT pg_temp.said('task_view', '{"id": "task-99"}');
SELECT count(*) AS todos FROM todo.todos;
SELECT count(*) AS items FROM todo.checklist_items;

-- ========== In Progress: the fenced claim; another agent refused ==========
SELECT pg_temp.said('task_edit', '{"id": "task-1", "status": "In Progress"}');
SELECT external_id, status, claimed_by FROM todo.todos WHERE external_id = 'TASK-1';
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'codex@s2', 'turn-1');
SELECT pg_temp.said('task_edit', '{"id": "task-1", "status": "In Progress"}');
SELECT pg_temp.said('task_edit', '{"id": "task-1", "status": "Done"}');
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('task_edit', '{"id": "task-1", "status": "Done"}');
SELECT pg_temp.said('task_complete', '{"id": "task-1"}');
SELECT external_id, status, claimed_by, archived_at IS NOT NULL AS archived FROM todo.todos ORDER BY id;
SELECT pg_temp.said('task_archive', '{"id": "task-2"}');
SELECT external_id, status, archived_at IS NOT NULL AS archived, metadata->>'archived_status' AS word FROM todo.todos ORDER BY id;
SELECT pg_temp.said('task_view', '{"id": "task-2"}');

-- ========== another tenant: the same project is another list ==========
SELECT FROM todo.set_context('globex', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('task_view', '{"id": "task-3"}');
SELECT pg_temp.said('task_edit', '{"id": "task-3", "title": "mine now"}');
SELECT pg_temp.said('task_list', '{}');

-- ========== read back through Task Master's and beads' tools, and theirs through Backlog.md's ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT r->'content'->0->>'text' AS beads_list FROM todo.call_mcp('beads/list', '{"workspace_root": "/home/me/app", "brief": true}') r;
SELECT (r->'content'->0->>'text')::jsonb->'data'->'stats' AS taskmaster_stats
  FROM todo.call_mcp('taskmaster/get_tasks', '{"projectRoot": "/home/me/app"}') r;
SELECT r->'content'->0->>'text' AS beads_create FROM todo.call_mcp('beads/create', '{"title": "Write the docs", "id": "bd-d0c", "workspace_root": "/home/me/app"}') r;
SELECT pg_temp.said('task_search', '{"query": "docs"}');
SELECT pg_temp.said('task_edit', '{"id": "task-4", "acceptanceCriteriaAdd": ["Examples run"]}');
SELECT r->'content'->0->>'text' AS beads_show FROM todo.call_mcp('beads/show', '{"issue_id": "bd-d0c", "workspace_root": "/home/me/app", "fields": ["title", "status"]}') r;

-- ========== a deleted todo takes its rows with it ==========
DELETE FROM todo.todos WHERE external_id = 'TASK-1';
SELECT count(*) AS items_left_of_task_1 FROM todo.checklist_items c
 WHERE NOT EXISTS (SELECT 1 FROM todo.todos t WHERE t.tenant_id = c.tenant_id AND t.id = c.todo_id);
rollback;

-- ========== the rows under row-level security, as an app's role ==========
BEGIN;
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT (todo.call_mcp('backlog/task_create', '{"title": "Kept", "acceptanceCriteria": ["One", "Two"]}')->>'isError')::bool AS refused;
SELECT (todo.call_mcp('backlog/task_edit', '{"id": "task-1", "commentsAppend": ["Noted"], "commentAuthor": "@ada"}')->>'isError')::bool AS refused;
COMMIT;
\connect - agent_login
\set ON_ERROR_ROLLBACK off
-- (SET LOCAL, as an app sets its tenant: on a distributed store it reaches the workers)
BEGIN;
SET LOCAL todo.tenant = 'acme';
SELECT c.position, c.text, c.checked FROM todo.checklist_items c ORDER BY c.position;
SELECT c.author, c.body FROM todo.comments c;
UPDATE todo.checklist_items SET checked = true WHERE position = 2;
COMMIT;
BEGIN;
SET LOCAL todo.tenant = 'globex';
SELECT count(*) AS globex_sees_items FROM todo.checklist_items;
SELECT count(*) AS globex_sees_comments FROM todo.comments;
UPDATE todo.checklist_items SET text = 'hijacked';
DELETE FROM todo.comments;
COMMIT;
BEGIN;
SET LOCAL todo.tenant = 'globex';
INSERT INTO todo.comments (tenant_id, todo_id, position, body) VALUES ('acme', 1, 9, 'planted');
ROLLBACK;
\connect - postgres
SELECT c.tenant_id, c.position, c.text, c.checked FROM todo.checklist_items c ORDER BY c.position;
SELECT c.tenant_id, c.author, c.body FROM todo.comments c;
DELETE FROM todo.tenants WHERE tenant_id IN ('acme', 'globex');
