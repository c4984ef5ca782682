-- tools_tenants: as the plain login role agent_login, tenant A against tenant B's ids through
-- every tool and REST route: answers identical to an id that never existed, B unchanged.
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_a'), ('tenant_b');
BEGIN;
SELECT todo.set_context('tenant_b', 'shared-conv', 'b', 'shared-turn') \gset
SELECT todo.call('create_todo', '{"items": [{"title": "b plan 1"}, {"title": "b plan 2"}, {"title": "b plan 3"}]}') IS NOT NULL AS seeded;
COMMIT;
\connect - agent_login
\set ON_ERROR_ROLLBACK on
BEGIN;
-- the same conversation and turn names in tenant A see nothing of B
SELECT todo.set_context('tenant_a', 'shared-conv', 'a', 'shared-turn') \gset
SELECT todo.call('list_todo', '{"status": "all"}');
SELECT todo.call('todoread', '{}')->'metadata';
SELECT todo.call('todolist__get', '{}');
SELECT todo.call('ListTasks', '{}');
SELECT todo.export_tasks('shared-conv');
SELECT todo.acp_plan('shared-conv');
SELECT todo.rest('GET', '/v1/todos')->'body';
-- B's #3 and a #999 that never existed: byte-identical answers (where an answer repeats the
-- id the caller sent, once that id is swapped)
SELECT replace(todo.call('complete_todo', '{"todoId": "3", "outcome": "x"}')::text, '3', '999')
       = todo.call('complete_todo', '{"todoId": "999", "outcome": "x"}')::text AS same,
       todo.call('complete_todo', '{"todoId": "3", "outcome": "x"}');
SELECT todo.call('CompleteTask', '{"taskId": "3"}') = todo.call('CompleteTask', '{"taskId": "999"}') AS same,
       todo.call('UncompleteTask', '{"taskId": "3"}') = todo.call('UncompleteTask', '{"taskId": "999"}') AS same_un,
       todo.call('DeleteTask', '{"taskId": "3"}') = todo.call('DeleteTask', '{"taskId": "999"}') AS same_delete;
SELECT todo.rest('GET', '/v1/todos/3') = todo.rest('GET', '/v1/todos/999') AS same_get,
       todo.rest('PATCH', '/v1/todos/3', '{"subject": "x"}') = todo.rest('PATCH', '/v1/todos/999', '{"subject": "x"}') AS same_patch,
       todo.rest('DELETE', '/v1/todos/3') = todo.rest('DELETE', '/v1/todos/999') AS same_delete,
       replace(todo.rest('PATCH', '/v1/todos', '[{"id": 3, "subject": "x"}]')::text, '3', '999')
       = todo.rest('PATCH', '/v1/todos', '[{"id": 999, "subject": "x"}]')::text AS same_bulk;
SELECT todo.rest('GET', '/v1/todos/3');
-- a whole-list replace in A's session of the same name leaves B's list alone
SELECT todo.call('todowrite', '{"todos": [{"content": "a only", "status": "pending", "priority": "low", "id": "1"}]}')->'metadata';
SELECT todo.call('todolist__set', '{"todos": []}');
SELECT todo.import_tasks('shared-conv', '{"tasks": []}');
COMMIT;
\connect - postgres
SELECT tenant_id, id, subject, status, version FROM todo.todos ORDER BY tenant_id, id;
DELETE FROM todo.tenants WHERE tenant_id IN ('tenant_a', 'tenant_b');
