-- statuses: the two open statuses beside blocked, deferred (put off) and review (done,
-- waiting for a review): open everywhere (lists, dependencies), never claimed nor ready; the
-- dialects that cannot say them show a deferred todo as pending and one in review as in
-- progress, and a list sent back in those words keeps them.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT FROM todo.set_context('acme', 'conv-s', 'planner', 'turn-1');
INSERT INTO todo.todos (subject, status) VALUES ('later', 'deferred'), ('check my fix', 'review'), ('next', 'pending');
SELECT id, subject, status, started_at IS NOT NULL AS started, completed_at IS NULL AS open FROM todo.todos ORDER BY id;
-- they move freely among the open statuses, finish, and reopen from a finished one only to pending
UPDATE todo.todos SET status = 'review' WHERE subject = 'later' RETURNING subject, status;
UPDATE todo.todos SET status = 'deferred' WHERE subject = 'later' RETURNING subject, status;
UPDATE todo.todos SET status = 'completed' WHERE subject = 'check my fix' RETURNING subject, status, completed_at IS NOT NULL AS done;
\set VERBOSITY terse
UPDATE todo.todos SET status = 'review' WHERE subject = 'check my fix';
\set VERBOSITY default
UPDATE todo.todos SET status = 'pending' WHERE subject = 'check my fix';
UPDATE todo.todos SET status = 'review' WHERE subject = 'check my fix' RETURNING subject, status, completed_at;
-- never ready, never claimed: the claim takes the pending one
SELECT id, subject FROM todo.ready(10);
SELECT FROM todo.set_context('acme', 'conv-s', 'worker-1', 'turn-1');
SELECT subject FROM todo.claim();
SELECT subject, status, claimed_by FROM todo.todos WHERE tenant_id = 'acme' AND claimed_by IS NOT NULL;
SELECT count(*) AS claimable_left FROM todo.ready(10);
-- a todo waiting on a deferred one is blocked by it: the writ says so
SELECT FROM todo.set_context('acme', 'conv-s', 'planner', 'turn-2');
INSERT INTO todo.todos (subject) VALUES ('after later');
SELECT todo.block((SELECT id FROM todo.todos WHERE subject = 'after later'), (SELECT id FROM todo.todos WHERE subject = 'later'));
SELECT count(*) AS ready_now FROM todo.ready(10);
SELECT todo.todo_writ('/todo list');
-- the dialects without them: Claude Code sees pending and in progress; sending the list back
-- in those words keeps deferred and review; Gemini keeps its own blocked; the REST shape and
-- TaskGet name them as stored
SELECT todo.list_as('claude-todowrite', 'conv-s');
SELECT todo.call('claude-todowrite/TodoWrite', (SELECT jsonb_build_object('todos', todo.list_as('claude-todowrite', 'conv-s') -> 'todos'))) ? 'newTodos' AS written;
SELECT subject, status FROM todo.todos WHERE tenant_id = 'acme' AND conversation_id = 'conv-s' AND archived_at IS NULL ORDER BY position, id;
SELECT todo.list_as('gemini', 'conv-s');
SELECT todo.list_as('codex', 'conv-s');
SELECT todo.rest('GET', '/v1/todos?conversation_id=conv-s&status=review') -> 'body' -> 'todos' -> 0 ->> 'status' AS rest_status;
rollback;
