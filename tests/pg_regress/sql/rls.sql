-- rls: tenant isolation as a plain login role. Superusers bypass row-level security (even
-- FORCEd), so every check below runs after \connect as agent_login: not superuser, no
-- BYPASSRLS, owns nothing. Tenant A may not see, change or delete B's rows (0 rows, no error
-- that tells B's rows from rows that never existed); with no tenant every statement errors.
-- Seeded as the superuser and committed, so the other session sees it; removed at the end.
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_a'), ('tenant_b');
BEGIN;
SELECT todo.set_context('tenant_a', 'conv-a', 'seed');
INSERT INTO todo.todos (subject) VALUES ('a: review the deploy'), ('a: write the post-mortem');
SELECT todo.set_context('tenant_b', 'conv-b', 'seed');
INSERT INTO todo.todos (subject) VALUES ('b: secret one'), ('b: secret two'), ('b: secret three');
COMMIT;

\connect - agent_login
SELECT current_user, r.rolsuper, r.rolbypassrls,
       (SELECT count(*) FROM pg_class WHERE relowner = r.oid) AS owns
  FROM pg_roles r WHERE r.rolname = current_user;
\set ON_ERROR_ROLLBACK on
BEGIN;
SELECT todo.set_context('tenant_a', 'conv-a', 'agent-a');
-- reads see only tenant A, on every table
SELECT tenant_id, id, subject FROM todo.todos ORDER BY id;
SELECT tenant_id, todo_id, action FROM todo.events ORDER BY todo_id;
SELECT tenant_id FROM todo.tenants;
SELECT tenant_id, last_id FROM todo.counters;
-- B's todo #3 and a #99 that never existed: the same answers
SELECT count(*) FROM todo.todos WHERE id = 3;
SELECT count(*) FROM todo.todos WHERE id = 99;
UPDATE todo.todos SET subject = 'pwned' WHERE id = 3 RETURNING tenant_id, id;
UPDATE todo.todos SET subject = 'pwned' WHERE id = 99 RETURNING tenant_id, id;
UPDATE todo.todos SET status = 'canceled' WHERE tenant_id = 'tenant_b' RETURNING tenant_id;
DELETE FROM todo.todos WHERE id = 3 RETURNING tenant_id, id;
DELETE FROM todo.todos WHERE id = 99 RETURNING tenant_id, id;
-- the event log is append-only: no role but its owner may delete from it
DELETE FROM todo.events WHERE tenant_id = 'tenant_b';
UPDATE todo.counters SET last_id = 1 WHERE tenant_id = 'tenant_b' RETURNING tenant_id;
-- writing a row for B, or for a tenant that does not exist: the same error
INSERT INTO todo.todos (tenant_id, subject) VALUES ('tenant_b', 'planted');
INSERT INTO todo.todos (tenant_id, subject) VALUES ('no_such_tenant', 'planted');
INSERT INTO todo.todos (tenant_id, id, subject) VALUES ('tenant_b', 1, 'planted');
INSERT INTO todo.events (tenant_id, todo_id, version, action) VALUES ('tenant_b', 1, 9, 'update');
INSERT INTO todo.counters (tenant_id, last_id) VALUES ('tenant_b', 50);
-- a row cannot be moved to B either
UPDATE todo.todos SET tenant_id = 'tenant_b' WHERE id = 1;
-- A's own writes work as usual
INSERT INTO todo.todos (subject) VALUES ('a: third') RETURNING tenant_id, id, agent_id;
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1 RETURNING id, status;
COMMIT;

-- no tenant in context: every read and every write errors
BEGIN;
SELECT count(*) FROM todo.todos;
SELECT count(*) FROM todo.events;
UPDATE todo.todos SET subject = 'x';
DELETE FROM todo.todos;
INSERT INTO todo.todos (subject) VALUES ('x');
INSERT INTO todo.todos (tenant_id, subject) VALUES ('tenant_a', 'x');
ROLLBACK;
-- an empty or blank tenant, or one RESET inside the transaction: the same
BEGIN;
SET LOCAL todo.tenant = '';
SELECT count(*) FROM todo.todos;
SET LOCAL todo.tenant = '   ';
UPDATE todo.todos SET subject = 'x';
SELECT todo.set_context('tenant_a');
RESET todo.tenant;
DELETE FROM todo.todos;
ROLLBACK;
\set ON_ERROR_ROLLBACK off

\connect - postgres
-- B's rows are exactly as seeded; A has its own changes
SELECT tenant_id, id, subject, status, version FROM todo.todos ORDER BY tenant_id, id;
SELECT tenant_id, last_id FROM todo.counters ORDER BY 1;
DELETE FROM todo.tenants WHERE tenant_id IN ('tenant_a', 'tenant_b');
