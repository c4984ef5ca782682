-- writ_corpus: nasty inputs through todo_writ in the database: CRLF, lone CR, tabs and NBSP
-- as separators, a fullwidth slash, upper-case /TODO, ids with leading zeros, 25-digit ids,
-- negative ids, non-ASCII digits, a right-to-left override, a message over the size limit,
-- 10,000 commands in one message. (The same files, tests/corpus/writ, seed the fuzzer.)
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'agent') \gset
\t on
\a
SELECT todo.todo_writ(E'/todo add crlf line\r\n/todo list\r\n');
SELECT todo.todo_writ(E'/todo add lone cr\r/todo list\r');
SELECT todo.todo_writ(E'/todo\tadd tab separated\n/todo add\ttab after verb');
SELECT todo.todo_writ(E'/todo\u00a0add nbsp separated\n/todo add nbsp\u00a0inside the subject') AS nbsp;
SELECT todo.todo_writ(E'\uff0ftodo add fullwidth slash') = '' AS fullwidth_is_prose;
SELECT todo.todo_writ(E'/TODO add upper case\n/Todo list\n/todo LIST');
SELECT todo.todo_writ(E'/todo start 004\n/todo done #0000000000000000000000001');
SELECT todo.todo_writ(E'/todo done 1234567890123456789012345\n/todo start #99999999999999999999\n/todo reopen 9223372036854775808');
SELECT todo.todo_writ(E'/todo done -3\n/todo reopen -3\n/todo delete #-1');
SELECT todo.todo_writ(E'/todo done \u0661\u0664\n/todo start \uff11\uff14\n/todo reopen \u0967');
-- a right-to-left override and a line separator in a subject: folded, so the row stays one line
SELECT todo.todo_writ(E'/todo add \u202eevil subject\u202c\n/todo add line\u2028separator\n/todo list');
SELECT subject = E'\u202eevil subject\u202c' AS stored_as_sent FROM todo.todos WHERE id = 6;
-- a message over todo.max_message_size (256 KiB): one error block, nothing runs
SELECT todo.todo_writ('/todo add too big' || E'\n' || repeat('x', 256 * 1024));
-- just under it: it runs (with the description's limit raised, as only a superuser can)
SET LOCAL todo.max_text_length = 300000;
SELECT length(todo.todo_writ(E'/todo add big body\n' || repeat('y', 256 * 1024 - 100) || E'\n/endtodo')) AS result_length;
SELECT length(description) AS body_length FROM todo.todos WHERE subject = 'big body';
-- 10,000 commands in one message (over todo.max_writ_commands, 200, unless a superuser
-- raises it): 10,000 blocks, each atomic
SELECT todo.todo_writ(string_agg('/todo add bulk ' || g, E'\n')) FROM generate_series(1, 10000) g;
SET LOCAL todo.max_writ_commands = 10000;
SELECT array_length(string_to_array(todo.todo_writ(string_agg('/todo add bulk ' || g, E'\n')), E'\n\n'), 1) AS blocks
  FROM generate_series(1, 10000) g;
SELECT count(*) AS bulk_rows, min(id), max(id) FROM todo.todos WHERE subject LIKE 'bulk %';
SELECT count(*) AS problems FROM todo.verify();
rollback;
