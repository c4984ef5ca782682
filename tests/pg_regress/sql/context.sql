-- context: the tenant, conversation, agent and turn come from transaction-scoped settings.
-- A missing tenant is an error, never "all tenants"; set_context checks registration.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.current_tenant();
INSERT INTO todo.todos (subject) VALUES ('no tenant yet');
SELECT todo.set_context(NULL);
SELECT todo.set_context('  ');
SELECT todo.set_context('globex');
SELECT todo.set_context('acme', 'conv-9', 'worker', 'turn-3');
SELECT todo.current_tenant(), todo.current_conversation(), todo.current_agent(), todo.current_turn();
-- SET LOCAL works the same way
SET LOCAL todo.conversation = 'conv-10';
SELECT todo.current_conversation();
-- a blank setting counts as unset
SET LOCAL todo.tenant = ' ';
SELECT todo.current_tenant();
-- a tenant set with SET LOCAL that is not registered: every read refuses it as every write
-- does (42704), never an empty answer
SET LOCAL todo.tenant = 'globex';
\set VERBOSITY terse
SELECT todo.todo_writ('/todo list');
SELECT todo.call('TaskList', '{}');
SELECT todo.list_as('opencode', 'c');
SELECT todo.export_tasks('c');
SELECT todo.acp_plan('c');
SELECT todo.changes_since(NULL);
SELECT todo.changes_since(NULL, NULL, 10);
SELECT todo.channel();
SELECT todo.rest('GET', '/v1/todos');
\set VERBOSITY default
rollback;
-- settings made with set_context end with the transaction
SELECT todo.current_conversation() IS NULL AS conversation_cleared;
