-- tools_taskmaster: Task Master's tools that need no model, over the store: its schemas, its
-- envelope and texts (the scenario recorded from task-master-ai 0.43.1 itself), dotted
-- subtasks, next_task's choice, seven statuses kept, set_task_status in-progress as
-- pg_todos' fenced claim, tags as lists, refusals with nothing written, the model tools'
-- one refusal, another tenant's tasks answered like missing ones, and tasks read back through
-- other dialects.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace((r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END,
         '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z', '<time>', 'g'), 'created on \d\d?/\d\d?/\d{4}', 'created on <date>', 'g')
    FROM todo.call_mcp('taskmaster/' || tool, args || '{"projectRoot": "/home/me/app"}') r $$;
CREATE FUNCTION pg_temp.rows(conv text) RETURNS TABLE (id text, parent text, subject text, status text, priority text,
                                                       claimed_by text, plan text, criteria text) LANGUAGE sql AS $$
  SELECT t.external_id, p.external_id, t.subject, t.status, t.priority, t.claimed_by, t.plan, t.completion_criteria
    FROM todo.todos t LEFT JOIN todo.todos p ON p.tenant_id = t.tenant_id AND p.id = t.parent_id
   WHERE t.tenant_id = 'acme' AND t.conversation_id = conv ORDER BY t.id $$;

-- ========== the catalog: Task Master's names and schemas ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT string_agg(t->>'name', ', ' ORDER BY n) AS tools FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, n)
 WHERE t->'_meta'->>'pg_todos/dialect' = 'taskmaster';
SELECT t->'inputSchema' AS set_task_status_schema FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' = 'taskmaster' AND t->>'name' = 'set_task_status';
SELECT t->>'description' AS next_task_description FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' = 'taskmaster' AND t->>'name' = 'next_task';

-- ========== add_task, get_tasks, get_task (Task Master's own answers, recorded) ==========
SELECT pg_temp.said('get_tasks', '{}');
SELECT pg_temp.said('add_task', '{"title": "Set up database", "description": "Create schema", "details": "Use Postgres",
  "testStrategy": "Run migrations", "priority": "high"}');
SELECT pg_temp.said('add_task', '{"title": "Write API", "description": "REST endpoints", "dependencies": "1"}');
SELECT pg_temp.said('add_task', '{"title": "Only a title"}');
SELECT pg_temp.said('add_task', '{"prompt": "Plan the launch"}');
SELECT pg_temp.said('get_tasks', '{}');
SELECT pg_temp.said('get_tasks', '{"status": "done"}');
SELECT pg_temp.said('get_task', '{"id": "1,2"}');
SELECT pg_temp.said('get_task', '{"id": "99"}');

-- ========== add_subtask: dotted ids under their task ==========
SELECT pg_temp.said('add_subtask', '{"id": "1", "title": "Create tables", "description": "Create the schema tables"}');
SELECT pg_temp.said('add_subtask', '{"id": "1", "title": "Add indexes", "dependencies": "1.1"}');
SELECT pg_temp.said('add_subtask', '{"id": "99", "title": "x"}');
SELECT pg_temp.said('add_subtask', '{"id": "1"}');
SELECT pg_temp.said('get_task', '{"id": "1.2"}');
SELECT pg_temp.said('get_tasks', '{"withSubtasks": true}');
SELECT * FROM pg_temp.rows('project:/home/me/app');

-- ========== next_task and set_task_status: the claim, a subtask first under a started task ==========
SELECT pg_temp.said('next_task', '{}');
SELECT pg_temp.said('set_task_status', '{"id": "1", "status": "in-progress"}');
SELECT subject, status, claimed_by, fence FROM todo.todos WHERE tenant_id = 'acme' AND external_id = '1';
SELECT pg_temp.said('next_task', '{}');
SELECT pg_temp.said('set_task_status', '{"id": "1.1", "status": "done"}');
SELECT pg_temp.said('next_task', '{}');
SELECT pg_temp.said('set_task_status', '{"id": "2", "status": "review"}');
SELECT pg_temp.said('set_task_status', '{"id": "77", "status": "done"}');
SELECT pg_temp.said('set_task_status', '{"id": "1.9", "status": "done"}');
SELECT pg_temp.said('set_task_status', '{"id": "1", "status": "bogus"}');
-- another agent: its claim refused, the task not offered to it, its done refused
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'codex@s2', 'turn-1');
SELECT pg_temp.said('set_task_status', '{"id": "1", "status": "in-progress"}');
SELECT pg_temp.said('set_task_status', '{"id": "1", "status": "done"}');
SELECT pg_temp.said('next_task', '{}');
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
-- the last subtask done: its task done too, the claim finished
SELECT pg_temp.said('set_task_status', '{"id": "1.2", "status": "done"}');
SELECT * FROM pg_temp.rows('project:/home/me/app');
SELECT pg_temp.said('get_tasks', '{"withSubtasks": true, "status": "done,review"}');
SELECT pg_temp.said('set_task_status', '{"id": "2", "status": "deferred"}');
SELECT pg_temp.said('next_task', '{}');
SELECT pg_temp.said('set_task_status', '{"id": "2,1", "status": "pending"}');

-- ========== update_subtask: the words kept as a timestamped block; metadata merged ==========
SELECT pg_temp.said('update_subtask', '{"id": "1.2", "prompt": "Indexes on tenant_id and status"}');
SELECT pg_temp.said('update_subtask', '{"id": "1.2", "metadata": "{\"ticket\": \"JIRA-4\"}"}');
SELECT pg_temp.said('update_subtask', '{"id": "1.2", "metadata": "[1]"}');
SELECT pg_temp.said('update_subtask', '{"id": "1.2"}');
SELECT pg_temp.said('update_subtask', '{"id": "1", "prompt": "x"}');
SELECT pg_temp.said('update_subtask', '{"id": "1.7", "prompt": "x"}');
SELECT regexp_replace(plan, '\d{4}-\d\d-\d\dT[0-9:.]+Z', '<time>', 'g') AS details, metadata
  FROM todo.todos WHERE tenant_id = 'acme' AND external_id = '1.2';

-- ========== dependencies ==========
SELECT pg_temp.said('add_dependency', '{"id": "2", "dependsOn": "1"}');
SELECT pg_temp.said('add_dependency', '{"id": "1", "dependsOn": "2"}');
SELECT pg_temp.said('add_dependency', '{"id": "1", "dependsOn": "99"}');
SELECT pg_temp.said('add_dependency', '{"id": "1", "dependsOn": "1"}');
SELECT pg_temp.said('remove_dependency', '{"id": "2", "dependsOn": "1"}');
SELECT pg_temp.said('remove_dependency', '{"id": "2", "dependsOn": "1"}');
SELECT pg_temp.said('add_dependency', '{"id": "2", "dependsOn": "1.2"}');
SELECT pg_temp.said('validate_dependencies', '{}');

-- ========== tags: lists of the project ==========
SELECT pg_temp.said('list_tags', '{}');
SELECT pg_temp.said('add_tag', '{"name": "feature-x", "description": "The X feature"}');
SELECT pg_temp.said('add_tag', '{"name": "feature-x"}');
SELECT pg_temp.said('add_tag', '{"name": "bad name!"}');
SELECT pg_temp.said('use_tag', '{"name": "feature-x"}');
SELECT pg_temp.said('add_task', '{"title": "Design X", "description": "Sketch it"}');
SELECT pg_temp.said('get_tasks', '{}');
SELECT pg_temp.said('copy_tag', '{"sourceName": "feature-x", "targetName": "copy1"}');
SELECT pg_temp.said('rename_tag', '{"oldName": "copy1", "newName": "copy2"}');
SELECT pg_temp.said('list_tags', '{"showMetadata": true}');
SELECT pg_temp.said('delete_tag', '{"name": "copy2"}');
SELECT pg_temp.said('delete_tag', '{"name": "master"}');
SELECT pg_temp.said('use_tag', '{"name": "master"}');
SELECT pg_temp.said('get_tasks', '{"tag": "feature-x"}');
SELECT pg_temp.said('use_tag', '{"name": "nope"}');
SELECT conversation_id, external_id, subject FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id LIKE 'project:/home/me/app#%' ORDER BY id;

-- ========== remove_task: a subtask, a task with its subtasks, a missing one ==========
SELECT pg_temp.said('remove_task', '{"id": "1.1"}');
SELECT pg_temp.said('remove_task', '{"id": "2,99"}');
SELECT pg_temp.said('remove_task', '{"id": "1"}');
SELECT * FROM pg_temp.rows('project:/home/me/app');

-- ========== the model tools: one refusal, nothing written ==========
SELECT pg_temp.said('parse_prd', '{}');
SELECT pg_temp.said('expand_task', '{"id": "2"}');
SELECT pg_temp.said('research', '{"query": "x"}');

-- ========== another tenant: the same project root is another list ==========
SELECT FROM todo.set_context('globex', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('get_task', '{"id": "2"}');
SELECT pg_temp.said('set_task_status', '{"id": "2", "status": "done"}');
SELECT pg_temp.said('list_tags', '{}');

-- ========== read back through other dialects: beads and the writ ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('add_task', '{"title": "Ship it", "description": "Release 1.0", "dependencies": "2"}');
SELECT r->'content'->0->>'text' AS beads_list FROM todo.call_mcp('beads/list', '{"workspace_root": "/home/me/app", "brief": true}') r;
SELECT regexp_replace(todo.list_as('taskmaster', 'project:/home/me/app')::text, '\d{4}-\d\d-\d\dT[0-9:.]+Z', '<time>', 'g') AS list_as;
rollback;
