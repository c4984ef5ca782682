-- writ: todo.todo_writ(message) for every verb, its result line and its errors. Results are
-- printed raw (\t \a) so the expected file shows exactly what the model reads.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1') \gset
\t on
\a
-- the seed's flow: add, list, start, done, cancel, describe, subject
SELECT todo.todo_writ($$I'll track this.
/todo add review the deploy status
/todo add write the post-mortem
/todo add file the rollback ticket
/todo list$$);
SELECT todo.todo_writ('/todo start 1');
SELECT todo.todo_writ('/todo describe 1: bumped to follow up next sprint');
SELECT todo.todo_writ('/todo subject 1: review the canary deploy status');
SELECT todo.todo_writ('/todo list');
SELECT todo.todo_writ(E'/todo done #1\n/todo cancel 3\n/todo list all');
-- reopen, and a terminal todo is not restarted in place
SELECT todo.todo_writ(E'/todo start 3\n/todo reopen 3\n/todo start 3');
-- delete
SELECT todo.todo_writ(E'/todo delete 2\n/todo list all');
-- the stored description and subject
SELECT id, subject, description, status FROM todo.todos ORDER BY id;
-- errors: nothing changes, the commands after still run
SELECT todo.todo_writ($$/todo add
/todo add   
/todo frobnicate 3
/todo Add upper-case verbs are not verbs
/todo start
/todo start 99
/todo done #99
/todo cancel nothing like it
/todo reopen 99
/todo reopen x
/todo delete 99
/todo describe 1 no colon
/todo describe 99: text
/todo subject 1:
/todo list everything
/todo help$$);
-- subjects: exact, then case-insensitive, then unique prefix; ambiguity asks for the id
SELECT todo.todo_writ($$/todo add Deploy the API
/todo add deploy the API
/todo add deploy the worker
/todo add write docs
/todo start Deploy the API
/todo start DEPLOY THE API
/todo start deploy the w
/todo done deploy
/todo done WRITE
/todo list all$$);
-- no command, and prose only
SELECT todo.todo_writ('') = '' AS empty_message, todo.todo_writ('just prose, no commands') = '' AS prose_only;
-- events name the agent in context
SELECT todo_id, version, action, agent_id, new_status FROM todo.events WHERE todo_id IN (1, 3) ORDER BY todo_id, version;
rollback;
