-- pg_todos demo: a supervisor agent and a sub-agent share one durable todo list.
\pset footer off
CREATE EXTENSION pg_todos;

-- An administrator registers two tenants and lets the app's role use the store, for any
-- tenant (the app serves both). An agent gets a role of its own, bound to its tenant, with
-- the functions only (the MCP example, examples/mcp_supervisor.py, connects as it).
INSERT INTO todo.tenants (tenant_id, name) VALUES ('acme', 'Acme Corp'), ('globex', 'Globex');
SELECT todo.grant_usage('demo_agent');
SELECT 'CREATE ROLE acme_agent LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'acme_agent') \gexec
SELECT todo.grant_usage('acme_agent', 'acme', plain_sql => false);

-- From here on we are the app, connected as a plain role: row-level security applies.
\connect - demo_agent
\set ON_ERROR_ROLLBACK on

-- The supervisor plans in conversation conv-42. The context comes from the app, per transaction.
BEGIN;
SELECT todo.set_context('acme', 'conv-42', 'supervisor', 'turn-1');
INSERT INTO todo.todos (subject) VALUES ('review the canary deploy status')
  RETURNING id, status, position;
INSERT INTO todo.todos (subject, description) VALUES ('write the post-mortem', E'timeline\nroot cause\nfollow-ups')
  RETURNING id, status, position;
-- a tenant-wide todo: visible from every conversation of acme
INSERT INTO todo.todos (conversation_id, subject) VALUES (NULL, 'file the rollback ticket')
  RETURNING id, conversation_id;
COMMIT;

-- A sub-agent picks up the same list in the same conversation and marks progress.
BEGIN;
SELECT todo.set_context('acme', 'conv-42', 'sub-agent-1', 'turn-2');
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1
  RETURNING id, status, started_at IS NOT NULL AS started;
UPDATE todo.todos SET status = 'completed', outcome = 'canary healthy, promoted' WHERE id = 1
  RETURNING id, status, completed_at IS NOT NULL AS completed;
-- the lifecycle is enforced: a completed todo is not restarted in place
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1;
-- both spellings of cancel are accepted; one is stored
UPDATE todo.todos SET status = 'cancelled' WHERE id = 3 RETURNING id, status;
COMMIT;

-- What the conversation sees: its rows plus the tenant-wide pool.
BEGIN;
SELECT todo.set_context('acme', 'conv-42');
SELECT id, status, subject, coalesce(conversation_id, '(tenant-wide)') AS scope
  FROM todo.todos
 WHERE conversation_id = todo.current_conversation() OR conversation_id IS NULL
 ORDER BY status = 'in_progress' DESC, position;
-- every change is in the event log, with the agent that made it
SELECT todo_id, version, action, agent_id, old_status, new_status FROM todo.events ORDER BY todo_id, version;
COMMIT;

-- Another tenant sees none of it, and cannot touch it: acme's #2 behaves like #999.
BEGIN;
SELECT todo.set_context('globex', 'conv-1', 'intruder');
SELECT count(*) AS visible FROM todo.todos;
UPDATE todo.todos SET subject = 'pwned' WHERE id = 2 RETURNING id;
UPDATE todo.todos SET subject = 'pwned' WHERE id = 999 RETURNING id;
INSERT INTO todo.todos (tenant_id, subject) VALUES ('acme', 'planted');
-- its own ids start at 1: they reveal nothing about acme's activity
INSERT INTO todo.todos (subject) VALUES ('globex first todo') RETURNING id;
COMMIT;

-- The /todo writ (seed 000): the supervisor plans in its own words, in a new conversation.
\t on
\a
BEGIN;
SELECT todo.set_context('acme', 'conv-77', 'supervisor', 'turn-1');
SELECT todo.todo_writ($$I'll break this down first.
/todo add review the canary deploy status
/todo add write the post-mortem
timeline of the outage
root cause and follow-ups
/endtodo
/todo start 4
/todo list$$);
COMMIT;

-- The supervisor's next turn opens with the preamble, so it never walks in blind.
BEGIN;
SELECT todo.set_context('acme', 'conv-77', 'supervisor', 'turn-2');
SELECT todo.todo_open_preamble('conv-77');
COMMIT;

-- It delegates: the runtime prepends the open block to the sub-agent's context.
BEGIN;
SELECT todo.set_context('acme', 'conv-77', 'supervisor', 'turn-2');
SELECT format(E'[DELEGATION CONTEXT]\nOriginal request: investigate the outage\nDelegated by: supervisor\nPipeline depth: 1/2\n%s\n[END DELEGATION CONTEXT]',
              todo.todo_open_block('conv-77'));
COMMIT;

-- The sub-agent marks progress as it goes, by id or by subject.
BEGIN;
SELECT todo.set_context('acme', 'conv-77', 'sub-agent-1', 'turn-3');
SELECT todo.todo_writ($$Canary looks healthy.
/todo done 4
/todo start write the post
/todo done 99
/todo list all$$);
COMMIT;

-- One store, every dialect: the same conversation through seed 003's MCP tools, OpenCode's
-- todoread, an ACP plan and the REST shape.
BEGIN;
SELECT todo.set_context('acme', 'conv-77', 'sub-agent-2', 'turn-4');
SELECT jsonb_pretty(todo.call('todolist__get', '{}'));
SELECT todo.call('todolist__set', '{"todos": [
  {"content": "review the canary deploy status", "status": "completed", "activeForm": "Reviewing the canary"},
  {"content": "write the post-mortem", "status": "in_progress", "activeForm": "Writing the post-mortem"},
  {"content": "share the post-mortem", "status": "pending", "activeForm": "Sharing the post-mortem"}]}');
SELECT todo.call('todoread', '{}')->>'output';
SELECT jsonb_pretty(todo.acp_plan('conv-77'));
SELECT jsonb_pretty(todo.rest('GET', '/v1/todos?conversation_id=conv-77&status=pending'));
COMMIT;
\t off
\a

-- And with no tenant in context, nothing is readable at all; nor with one a session-level
-- SET left behind: the context lasts the transaction that set it.
SELECT count(*) FROM todo.todos;
SET todo.tenant = 'acme';
SELECT count(*) FROM todo.todos;
RESET todo.tenant;

-- The agent's role is bound to acme: with no context it acts for acme, and it may act for no
-- other tenant, whatever it sets. It has no table privileges: the functions only.
\connect - acme_agent
\set ON_ERROR_ROLLBACK on
SELECT todo.todo_open_block('conv-77');
SELECT todo.set_context('globex');
SELECT count(*) FROM todo.todos;
