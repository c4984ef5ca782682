-- writ_tenants: through the writ, another tenant's id gets exactly the text a never-used id
-- gets, and its rows do not change. Runs as the plain login role agent_login.
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_a'), ('tenant_b');
BEGIN;
SELECT todo.set_context('tenant_b', 'conv-b') \gset
SELECT todo.todo_writ(E'/todo add b one\n/todo add b two\n/todo add b three') IS NOT NULL AS seeded;
COMMIT;
\connect - agent_login
\t on
\a
BEGIN;
SELECT todo.set_context('tenant_a', 'conv-b', 'agent-a') \gset
SELECT todo.todo_writ('/todo add a one');
-- #3 exists only in tenant_b; #999 exists nowhere: identical answers
SELECT todo.todo_writ(E'/todo start 3\n/todo done 3\n/todo cancel 3\n/todo reopen 3\n/todo delete 3\n/todo describe 3: x\n/todo subject 3: x');
SELECT todo.todo_writ(E'/todo start 999\n/todo done 999\n/todo cancel 999\n/todo reopen 999\n/todo delete 999\n/todo describe 999: x\n/todo subject 999: x');
SELECT todo.todo_writ('/todo done b one');
SELECT todo.todo_writ('/todo list all');
SELECT todo.todo_open_block('conv-b');
COMMIT;
-- with no tenant the writ is a SQL error; the open block is empty
SELECT todo.todo_writ('/todo list');
SELECT todo.todo_open_block('conv-b') = '' AS empty;
-- a role with no privileges on the tables: the open block is empty, with a WARNING
\connect - nogrant_login
SELECT set_config('todo.tenant', 'tenant_a', false) \gset
SELECT todo.todo_open_block('conv-b') = '' AS empty;
\connect - postgres
SELECT tenant_id, id, subject, status, version FROM todo.todos ORDER BY tenant_id, id;
DELETE FROM todo.tenants WHERE tenant_id IN ('tenant_a', 'tenant_b');
