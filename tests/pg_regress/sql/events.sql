-- events: every change of a todo appends one row to todo.events, with the acting agent.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'planner', 'turn-1');
INSERT INTO todo.todos (subject) VALUES ('ship it');
SELECT todo.set_context('acme', 'conv-1', 'worker-7', 'turn-2');
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1;
UPDATE todo.todos SET subject = 'ship it today' WHERE id = 1;
UPDATE todo.todos SET subject = subject WHERE id = 1;  -- no change: no event
UPDATE todo.todos SET status = 'completed' WHERE id = 1;
DELETE FROM todo.todos WHERE id = 1;
-- (the stamps' values are the transaction's now(); shown as "stamped")
SELECT todo_id, version, action, agent_id, turn_id, old_status, new_status,
       changes - '{started_at,completed_at}'::text[] AS changes,
       array(SELECT k FROM jsonb_object_keys(changes) k WHERE k IN ('started_at', 'completed_at') ORDER BY k) AS stamped
  FROM todo.events ORDER BY todo_id, version;
-- deleting the tenant deletes its todos, counters and events
INSERT INTO todo.todos (subject) VALUES ('left behind');
DELETE FROM todo.tenants WHERE tenant_id = 'acme';
SELECT (SELECT count(*) FROM todo.todos) AS todos, (SELECT count(*) FROM todo.events) AS events,
       (SELECT count(*) FROM todo.counters) AS counters;
rollback;
-- a surface's change of a todo to the status it has writes nothing (no version, no event);
-- with another column, that column alone
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'worker-7');
SELECT todo.todo_writ(E'/todo add ship it\n/todo start 1\n/todo start 1');
SELECT r->>'status' AS http, r->'body'->'todo'->>'status' AS status
  FROM todo.rest('PATCH', '/v1/todos/1', '{"status": "in_progress"}') r;
SELECT r->>'status' AS http, r->'body'->'todo'->>'subject' AS subject
  FROM todo.rest('PATCH', '/v1/todos/1', '{"status": "in_progress", "subject": "ship it now"}') r;
SELECT id, status, version, subject FROM todo.todos;
SELECT todo_id, version, action, old_status, new_status, changes - '{started_at}'::text[] AS changes
  FROM todo.events ORDER BY version;
rollback;
