-- lifecycle: what a psql user sees writing todos with plain SQL. Ids, positions, statuses
-- and stamps come from defaults and the row trigger; forbidden transitions change nothing.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id, name) VALUES ('acme', 'Acme Corp');
SELECT todo.set_context('acme', 'conv-1', 'planner', 'turn-1');
INSERT INTO todo.todos (subject) VALUES ('review the deploy status') RETURNING id, status, position, conversation_id, agent_id, turn_id;
INSERT INTO todo.todos (subject, description) VALUES ('write the post-mortem', E'timeline\nroot cause') RETURNING id;
INSERT INTO todo.todos (conversation_id, subject) VALUES (NULL, 'file the rollback ticket') RETURNING id, conversation_id;
-- start, then finish; the stamps follow
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1 RETURNING id, status, started_at IS NOT NULL AS started, completed_at IS NOT NULL AS completed;
UPDATE todo.todos SET status = 'completed', outcome = 'all green' WHERE id = 1 RETURNING id, status, completed_at = now() AS completed_now;
-- a finished todo cannot be restarted in place: reopen it first
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1;
SELECT id, status FROM todo.todos WHERE id = 1;
UPDATE todo.todos SET status = 'pending' WHERE id = 1 RETURNING id, status, completed_at;
-- both spellings of cancel; the table stores one
UPDATE todo.todos SET status = 'cancelled' WHERE id = 2 RETURNING id, status;
-- an unknown status, and a blank subject
UPDATE todo.todos SET status = 'done' WHERE id = 3;
\set VERBOSITY terse
INSERT INTO todo.todos (subject) VALUES ('   ');
\set VERBOSITY default
-- the row rules (checked by the row trigger, named as the constraints they were): each
-- refusal says what to fix and writes nothing
INSERT INTO todo.todos (subject) VALUES ('');
\set VERBOSITY terse
INSERT INTO todo.todos (id, subject) VALUES (-1, 'a negative id');
INSERT INTO todo.todos (conversation_id, subject) VALUES ('', 'an empty conversation');
INSERT INTO todo.todos (subject, priority) VALUES ('an unknown priority', 'urgent');
INSERT INTO todo.todos (subject, metadata) VALUES ('metadata that is a list', '[1, 2]');
INSERT INTO todo.todos (subject, external_id) VALUES ('an empty external id', '');
UPDATE todo.todos SET completed_at = NULL WHERE id = 2;
UPDATE todo.todos SET parent_id = 3 WHERE id = 3;
\set VERBOSITY default
SELECT count(*) AS todos, count(*) FILTER (WHERE parent_id IS NOT NULL OR (id = 2 AND completed_at IS NULL)) AS changed FROM todo.todos;
-- completed_at only ever sits on a terminal row
SELECT id, status, completed_at IS NOT NULL AS has_completed_at FROM todo.todos ORDER BY id;
-- a todo's identity does not change
UPDATE todo.todos SET id = 10 WHERE id = 3;
-- show the SQLSTATEs of the same errors
\set VERBOSITY sqlstate
UPDATE todo.todos SET status = 'in_progress' WHERE id = 2;
UPDATE todo.todos SET status = 'done' WHERE id = 3;
UPDATE todo.todos SET id = 10 WHERE id = 3;
\set VERBOSITY default
rollback;
