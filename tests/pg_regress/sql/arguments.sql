-- arguments: what a caller gets for an argument a function cannot use — an error that names it
-- and says what to pass, never a NULL answer, and never PostgreSQL's words about its internals.
INSERT INTO todo.tenants (tenant_id) VALUES ('args');
BEGIN;
SELECT todo.set_context('args', 'conv', 'agent') IS NOT NULL AS context_set;
INSERT INTO todo.todos (subject) VALUES ('one'), ('two');
COMMIT;
\connect - agent_login
\set VERBOSITY default
\set ON_ERROR_ROLLBACK on
BEGIN;
SELECT todo.set_context('args', 'conv', 'agent') IS NOT NULL AS context_set;
-- a NULL where a value is needed: 22004, naming the argument
SELECT todo.todo_writ(NULL);
\echo :SQLSTATE
SELECT todo.list_as(NULL, 'conv');
SELECT todo.list_as('codex', NULL);
SELECT todo.block(NULL, 1);
\echo :SQLSTATE
SELECT todo.block(1, NULL);
SELECT todo.unblock(NULL, 1);
SELECT * FROM todo.ready(NULL);
SELECT todo.acp_plan(NULL);
SELECT todo.export_tasks(NULL);
SELECT todo.import_tasks(NULL, '{"tasks": []}');
SELECT todo.import_tasks('conv', NULL);
SELECT todo.changed_tenants(NULL, ARRAY['1:1:']);
SELECT todo.changed_tenants(ARRAY['args'], NULL);
\echo :SQLSTATE
-- (the functions still answer with values)
SELECT todo.block(1, 2), todo.unblock(1, 2), (SELECT count(*) FROM todo.ready(10)) AS ready;
-- a cursor PostgreSQL's pg_snapshot refuses (transaction id 0 of epoch 1) is not a cursor:
-- 22P02 in the function's words, saying what a cursor looks like
SELECT todo.changes_since('4294967296:4294967296:');
\echo :SQLSTATE
SELECT todo.changes_since('4294967296:4294967296:', NULL, 10);
SELECT todo.changed_tenants(ARRAY['args'], ARRAY['1:4294967296:']);
\echo :SQLSTATE
-- a cursor of epoch 1 is one
SELECT todo.changed_tenants(ARRAY['args'], ARRAY['4294967297:4294967297:']) AS changed;
COMMIT;
-- todo.stats() with no tenant in context: the error and its hint, and no statement of the
-- function's in its CONTEXT
SELECT * FROM todo.stats();
\echo :SQLSTATE
\connect - postgres
DELETE FROM todo.tenants WHERE tenant_id = 'args';
