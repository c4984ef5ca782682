-- writ_block: the block form of /todo add (a body up to /endtodo), truncation, and fenced
-- examples that never run.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'supervisor') \gset
\t on
\a
-- a body: every line up to /endtodo, blank lines and /-prefixed paths included
SELECT todo.todo_writ($$/todo add write the post-mortem
timeline of the outage

/var/log/deploy.log shows the bad config
/endtodo
/todo list$$);
SELECT description FROM todo.todos WHERE id = 1;
-- next line empty, a /todo command, a bare /endtodo or another /word command: single-line
SELECT todo.todo_writ($$/todo add first

/todo add second
/todo add third
/endtodo
/todo add fourth
/agent researcher look into it
/todo list$$);
SELECT id, subject, description IS NULL AS no_description FROM todo.todos WHERE id > 1 ORDER BY id;
-- /todo lines inside a body are description, not commands
SELECT todo.todo_writ($$/todo add plan the migration
step one
/todo delete 1
/endtodo$$);
SELECT count(*) AS still_there FROM todo.todos WHERE id = 1;
-- truncated: no /endtodo. Commands before it ran; nothing after its head line runs
SELECT todo.todo_writ($$/todo start 1
/todo add half-written
a body that never ends
/todo done 1$$);
SELECT id, status FROM todo.todos WHERE id = 1;
SELECT count(*) AS not_committed FROM todo.todos WHERE subject = 'half-written';
-- CRLF line endings and trailing spaces
SELECT todo.todo_writ(E'/todo add crlf body\r\nline one\r\n/endtodo  \r\n/todo list  \r\n');
-- fenced examples are never executed
SELECT todo.todo_writ($$Here is how you would do it:
```
/todo delete 1
/todo add not really
```
~~~text
/todo done 1
~~~
/todo list$$);
rollback;
