-- ids_never_reused: a todo's id is never given to a second todo. 1.0.0 let an app's plain
-- INSERT name the id of a todo it had deleted: the new row got no insert event of its own
-- (the deleted todo's was there), never reached the change feed, and every later UPDATE,
-- completion or DELETE failed with 23505 on events_pkey. Now such an INSERT is refused.
-- (Each SET LOCAL is made outside psql's ON_ERROR_ROLLBACK savepoints: Citus forgets one made
-- inside a savepoint once it is released.)
INSERT INTO todo.tenants (tenant_id) VALUES ('ids');
\connect - agent_login
\set VERBOSITY default
\set SHOW_CONTEXT never
\set ON_ERROR_ROLLBACK on
\set ON_ERROR_ROLLBACK off
BEGIN;
SET LOCAL todo.tenant = 'ids';
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.todos (subject) VALUES ('first'), ('second'), ('third') RETURNING id, subject;
DELETE FROM todo.todos WHERE id = 1;
COMMIT;
\set ON_ERROR_ROLLBACK off
BEGIN;
SET LOCAL todo.tenant = 'ids';
\set ON_ERROR_ROLLBACK on
-- the deleted todo's id: refused, naming it
INSERT INTO todo.todos (id, subject) VALUES (1, 'first again');
\echo :SQLSTATE
-- a live todo's id: refused before the primary key would
INSERT INTO todo.todos (id, subject) VALUES (2, 'second again');
\echo :SQLSTATE
-- an id the counter handed out to a range and no todo ever had: accepted once
INSERT INTO todo.todos (id, subject) VALUES (10, 'ten') RETURNING id;
-- deleted in the same transaction, it is not given again either
DELETE FROM todo.todos WHERE id = 10;
INSERT INTO todo.todos (id, subject) VALUES (10, 'ten again');
\echo :SQLSTATE
-- an add without an id gets a new one
INSERT INTO todo.todos (subject) VALUES ('first, added again') RETURNING id > 10 AS new_id;
COMMIT;
-- every todo there can still be changed, completed and deleted; each has its own history
\set ON_ERROR_ROLLBACK off
BEGIN;
SET LOCAL todo.tenant = 'ids';
\set ON_ERROR_ROLLBACK on
UPDATE todo.todos SET status = 'in_progress' WHERE subject = 'second';
UPDATE todo.todos SET status = 'completed' WHERE subject = 'second';
DELETE FROM todo.todos WHERE subject = 'third';
SELECT subject, status FROM todo.todos ORDER BY id;
SELECT todo_id, version, action FROM todo.events WHERE todo_id <= 10 ORDER BY todo_id, version;
SELECT * FROM todo.verify_tenant('ids');
COMMIT;
-- a superuser's INSERT is refused the same way (a restore, row_security = off, brings the
-- rows and their history as they were)
\connect - postgres
\set VERBOSITY default
\set SHOW_CONTEXT never
INSERT INTO todo.todos (tenant_id, id, subject) VALUES ('ids', 3, 'third again');
\echo :SQLSTATE
SELECT count(*) AS todos_with_id_3 FROM todo.todos WHERE tenant_id = 'ids' AND id = 3;
DELETE FROM todo.tenants WHERE tenant_id = 'ids';
