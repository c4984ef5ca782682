-- roles: what a role may do, tried as the role. Three kinds (todo.grant_usage):
--   agent_acme: an agent's role, bound to tenant acme, the functions only;
--   app_acme:   an app's role, bound to acme, plain SQL on todo.todos too;
--   agent_login (00_setup): a service's role, any tenant.
-- Each may act only as its grant says, whatever it sets; none writes the event log, the id
-- counters or the lock rows itself; an agent's role cannot lock or read a table; the context
-- lasts one transaction.
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
BEGIN;
SELECT todo.set_context('globex', 'conv-g', 'seed');
INSERT INTO todo.todos (subject) VALUES ('globex: secret plan');
COMMIT;
CREATE ROLE agent_acme LOGIN;
CREATE ROLE app_acme LOGIN;
SELECT todo.grant_usage('agent_acme', 'acme', plain_sql => false);
SELECT todo.grant_usage('app_acme', 'acme');
-- granting is idempotent; it never changes a role's tenant, nor binds a role that bypasses
-- row-level security, nor names a tenant that is not registered
SELECT todo.grant_usage('agent_acme', 'acme', plain_sql => false);
\set VERBOSITY terse
SELECT todo.grant_usage('agent_acme', 'globex');
SELECT todo.grant_usage('agent_acme');
SELECT todo.grant_usage('agent_login', 'acme');
SELECT todo.grant_usage('postgres', 'acme');
CREATE ROLE nobody_yet;
SELECT todo.grant_usage('nobody_yet', 'initech');
SELECT role, tenant_id, plain_sql FROM todo.roles ORDER BY role::text;
-- what each holds on the tables
SELECT a.grantee::regrole AS role, c.relname, string_agg(a.privilege_type, ',' ORDER BY a.privilege_type) AS privileges
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'todo'::regnamespace AND a.grantee IN ('agent_acme'::regrole, 'app_acme'::regrole)
 GROUP BY 1, 2 ORDER BY 1, 2;
-- an ungranted role may call no function but the context readers
\connect - nogrant_login
\set VERBOSITY terse
SELECT todo.todo_writ('/todo list');
SELECT todo.current_conversation() IS NULL AS reads_context;

-- the agent's role: its tenant without setting one, and no other whatever it sets
\connect - agent_acme
\set VERBOSITY terse
\set ON_ERROR_ROLLBACK on
SELECT todo.todo_writ('/todo add acme: ship it');
SELECT todo.current_tenant();
BEGIN;
SELECT todo.set_context('globex');
SELECT todo.set_context('initech');
SELECT todo.set_context('acme', 'conv-a', 'agent-1');
SELECT todo.todo_writ('/todo list');
SET LOCAL todo.tenant = 'globex';
SELECT todo.todo_writ('/todo list');
SELECT set_config('todo.tenant', 'globex', true);
SELECT todo.rest('GET', '/v1/todos/1');
SELECT todo.call('TaskList', '{}');
ROLLBACK;
-- a person (person:…) comes only from a person's token: not from an agent's role, whatever
-- it sets
BEGIN;
SELECT todo.set_context('acme', 'conv-a', 'person:Ada');
ROLLBACK;
BEGIN;
SELECT todo.set_context('acme', 'conv-a', '  PERSON:Ada');
ROLLBACK;
BEGIN;
SELECT todo.set_context('acme', 'conv-a', 'agent-1');
SET LOCAL todo.agent = 'Person:Ada';
SELECT todo.todo_writ('/todo add as a person');
SELECT todo.current_agent();
ROLLBACK;
-- no table: no read, no write, no lock
SELECT count(*) FROM todo.todos;
SELECT count(*) FROM todo.events;
BEGIN;
LOCK TABLE todo.todos IN ACCESS EXCLUSIVE MODE;
LOCK TABLE todo.todos IN ACCESS SHARE MODE;
LOCK TABLE todo.events IN ACCESS EXCLUSIVE MODE;
LOCK TABLE todo.locks IN ACCESS EXCLUSIVE MODE;
ROLLBACK;
TRUNCATE todo.todos;
INSERT INTO todo.events (tenant_id, todo_id, version, action) VALUES ('acme', 1, 2, 'update');
UPDATE todo.counters SET last_id = 1;
SELECT * FROM todo.locks;
SELECT * FROM todo.roles;
-- nor the administrator's functions
SELECT todo.grant_usage('agent_acme');
SELECT todo.revoke_usage('app_acme');
SELECT * FROM todo.create_token('acme', 'mine');
-- row_security = off does not make a function call a restore (a cycle is still refused)
SET row_security = off;
SELECT todo.todo_writ($$/todo add acme: second
/todo block 1 on 2
/todo block 2 on 1$$);
RESET row_security;

-- the app's role: no table lock that would make other tenants' writes wait, first thing
-- in a new session (the library is preloaded), nor through a view of its own; the weaker
-- modes, which make no write wait, are its to take
\connect - postgres
CREATE SCHEMA app_own AUTHORIZATION app_acme;
\connect - app_acme
\set VERBOSITY terse
\set ON_ERROR_ROLLBACK on
BEGIN;
LOCK TABLE todo.todos IN ACCESS EXCLUSIVE MODE;
LOCK TABLE todo.todos IN SHARE MODE;
LOCK TABLE todo.todos IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE todo.todos IN EXCLUSIVE MODE;
LOCK TABLE todo.dependencies IN EXCLUSIVE MODE;
LOCK TABLE todo.todos IN ROW EXCLUSIVE MODE;
LOCK TABLE todo.todos IN SHARE UPDATE EXCLUSIVE MODE;
CREATE VIEW app_own.mine AS SELECT t.id FROM todo.todos t;
CREATE VIEW app_own.mine_again AS SELECT m.id FROM app_own.mine m;
LOCK TABLE app_own.mine_again IN SHARE MODE;
ROLLBACK;
-- the locks another session would wait for: none of the refused
SELECT count(*) AS strong_locks FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE c.relnamespace = 'todo'::regnamespace AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock');
\connect - postgres
DROP SCHEMA app_own;

-- the app's role: plain SQL on its tenant's todos, never another's, never an id of its own
\connect - app_acme
\set VERBOSITY terse
\set ON_ERROR_ROLLBACK on
SELECT id, subject FROM todo.todos ORDER BY id;
BEGIN;
SET LOCAL todo.tenant = 'globex';
SELECT count(*) FROM todo.todos;
ROLLBACK;
INSERT INTO todo.todos (subject) VALUES ('acme: by plain SQL') RETURNING id, tenant_id;
INSERT INTO todo.todos (id, subject) VALUES (9223372036854775807, 'acme: the last id');
INSERT INTO todo.todos (tenant_id, subject) VALUES ('globex', 'planted');
UPDATE todo.todos SET status = 'in_progress' WHERE id = 3 RETURNING id, status;
-- it reads its history, and writes it only through its todos
SELECT todo_id, version, action FROM todo.events ORDER BY todo_id, version;
INSERT INTO todo.events (tenant_id, todo_id, version, action) VALUES ('acme', 3, 3, 'update');
UPDATE todo.counters SET last_id = 1;
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('acme', 9, 1, 1);
SELECT * FROM todo.locks;
-- a dependency by plain SQL still takes the tenant's lock row and is checked for cycles
INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('acme', 3, 2);
INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('acme', 2, 3);
DELETE FROM todo.dependencies WHERE todo_id = 3;

-- the service's role: any tenant, in the transaction that names it, and only in that one
\connect - agent_login
\set VERBOSITY terse
\set ON_ERROR_ROLLBACK on
-- (and it may act as a person: pg_todos serve does, for a person's token)
BEGIN;
SELECT todo.set_context('globex', 'conv-g', 'person:Ada');
SELECT todo.current_agent();
ROLLBACK;
BEGIN;
SELECT todo.set_context('globex', 'conv-g');
SELECT todo.todo_writ('/todo list');
COMMIT;
SELECT todo.todo_writ('/todo list');
SET todo.tenant = 'globex';
SELECT todo.todo_writ('/todo list');
SELECT count(*) FROM todo.todos;
SELECT todo.current_tenant();
-- a SET in the transaction itself holds until it ends
BEGIN;
SET todo.tenant = 'globex';
SELECT count(*) FROM todo.todos;
COMMIT;
SELECT count(*) FROM todo.todos;
-- a savepoint rolled back takes its SET LOCAL with it: the earlier session value stays stale
BEGIN;
SAVEPOINT s;
SET LOCAL todo.tenant = 'acme';
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM todo.todos;
ROLLBACK;
RESET todo.tenant;

-- a member of a bound role (INHERIT) uses that role's grants and is bound with them: its
-- tenant with none set, no other whatever it sets; a membership granted or revoked counts
-- at once, in a session already running; a member of bound roles of two tenants acts for none
\connect - postgres
\set VERBOSITY terse
\set ON_ERROR_ROLLBACK on
CREATE ROLE member_acme LOGIN;
CREATE ROLE agent_globex;
SELECT todo.grant_usage('agent_globex', 'globex', plain_sql => false);
SET ROLE member_acme;
SELECT todo.current_tenant();
RESET ROLE;
GRANT agent_acme TO member_acme;
SET ROLE member_acme;
SELECT todo.current_tenant();
SELECT todo.todo_writ('/todo list');
BEGIN;
SELECT todo.set_context('globex');
ROLLBACK;
BEGIN;
SET LOCAL todo.tenant = 'globex';
SELECT todo.todo_writ('/todo list');
ROLLBACK;
RESET ROLE;
GRANT agent_globex TO member_acme;
SET ROLE member_acme;
SELECT todo.current_tenant();
SELECT todo.todo_writ('/todo list');
RESET ROLE;
REVOKE agent_acme FROM member_acme;
SET ROLE member_acme;
SELECT todo.current_tenant();
RESET ROLE;
-- a membership without INHERIT gives no privileges, and no binding
REVOKE agent_globex FROM member_acme;
ALTER ROLE member_acme NOINHERIT;
GRANT agent_acme TO member_acme;
SET ROLE member_acme;
SELECT todo.current_tenant();
RESET ROLE;
-- logged in as the member, the same
\connect - member_acme
\set VERBOSITY terse
SELECT todo.current_tenant();
\connect - postgres
REVOKE agent_acme FROM member_acme;
ALTER ROLE member_acme INHERIT;
GRANT agent_acme TO member_acme;
\connect - member_acme
\set VERBOSITY terse
SELECT todo.current_tenant();
SELECT todo.set_context('globex');
\connect - postgres
SELECT todo.revoke_usage('agent_globex');
DROP ROLE member_acme, agent_globex;

-- the lock rows are the extension's: one per tenant and purpose
\connect - postgres
SELECT tenant_id, name FROM todo.locks ORDER BY 1, 2;
SELECT tenant_id, id, subject FROM todo.todos WHERE tenant_id IN ('acme', 'globex') ORDER BY 1, 2;
SELECT tenant_id, last_id FROM todo.counters WHERE tenant_id IN ('acme', 'globex') ORDER BY 1;
-- revoking takes everything back, the binding included
SELECT todo.revoke_usage('agent_acme'), todo.revoke_usage('agent_acme');
-- a NULL role is refused, naming the argument (it was a syntax error of the REVOKE it built)
SELECT todo.revoke_usage(NULL);
SELECT count(*) AS privileges_left FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.relnamespace = 'todo'::regnamespace AND a.grantee = 'agent_acme'::regrole;
SELECT count(*) AS functions_left FROM pg_proc p, aclexplode(p.proacl) a
 WHERE p.pronamespace = 'todo'::regnamespace AND a.grantee = 'agent_acme'::regrole;
SELECT todo.revoke_usage('app_acme');
DROP ROLE agent_acme, app_acme, nobody_yet;
DELETE FROM todo.tenants WHERE tenant_id IN ('acme', 'globex');
