-- no_tenant: with the tenant unset, empty, blank, or RESET inside the transaction, every
-- surface either errors (writes and reads that would need a tenant) or returns nothing (the
-- best-effort blocks). Runs as the plain login role agent_login.
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_a');
BEGIN;
SELECT todo.set_context('tenant_a', 'conv-a') \gset
SELECT todo.todo_writ('/todo add something to find') IS NOT NULL AS seeded;
COMMIT;
\connect - agent_login
\set ON_ERROR_ROLLBACK on
\set VERBOSITY terse
-- each way of having no tenant, then every surface
BEGIN;
SELECT 'unset' AS tenant;
SELECT todo.todo_writ('/todo list');
SELECT todo.todo_writ('/todo add x');
SELECT todo.todo_open_block('conv-a') = '' AS empty_block, todo.todo_open_preamble('conv-a') = '' AS empty_preamble;
SELECT todo.call('todoread', '{}');
SELECT todo.call('todowrite', '{"todos": []}');
SELECT todo.call('ListTasks', '{}');
SELECT todo.rest('GET', '/v1/todos');
SELECT todo.rest('DELETE', '/v1/todos/1');
SELECT todo.acp_plan('conv-a');
SELECT todo.export_tasks('conv-a');
SELECT todo.import_tasks('conv-a', '{"tasks": []}');
SELECT todo.channel();
SELECT count(*) FROM todo.verify();
SELECT count(*) FROM todo.todos;
DELETE FROM todo.todos;
SET LOCAL todo.tenant = '';
SELECT 'empty' AS tenant;
SELECT todo.todo_writ('/todo list');
SELECT todo.todo_open_block('conv-a') = '' AS empty_block;
SELECT todo.call('todolist__set', '{"todos": []}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x"}');
SELECT count(*) FROM todo.todos;
UPDATE todo.todos SET subject = 'x';
SET LOCAL todo.tenant = '   ';
SELECT 'blank' AS tenant;
SELECT todo.todo_writ('/todo done 1');
SELECT todo.todo_open_preamble('conv-a') = '' AS empty_preamble;
SELECT todo.call('AddTask', '{"title": "x"}');
SELECT count(*) FROM todo.events;
INSERT INTO todo.todos (subject) VALUES ('x');
SELECT todo.set_context('tenant_a', 'conv-a') \gset
RESET todo.tenant;
SELECT 'reset' AS tenant;
SELECT todo.todo_writ('/todo list');
SELECT todo.todo_open_block('conv-a') = '' AS empty_block;
SELECT todo.call('create_todo', '{"items": [{"title": "x"}]}');
SELECT todo.rest('PATCH', '/v1/todos/1', '{"subject": "x"}');
SELECT count(*) FROM todo.todos;
COMMIT;
\set VERBOSITY default
\connect - postgres
-- nothing changed
SELECT tenant_id, id, subject, version FROM todo.todos ORDER BY tenant_id, id;
DELETE FROM todo.tenants WHERE tenant_id = 'tenant_a';
