-- limits: the input size limits (todo.max_*; docs/operations.md, "Limits"). A value over a
-- limit is refused with its own error on every surface, with nothing written: plain SQL
-- (22001), the writ (an ERR: line, or one [/todo] block for the whole message), a tool (its
-- error object), todo.rest (413, 422). The writ's output and the open block stop at
-- todo.max_output_size. A plain role cannot SET a limit; a superuser can, and then the value
-- is accepted. Long runs of one letter are shown squeezed: 'ssssssssss…'.
LOAD 'pg_todos';
SELECT name, setting, unit, context FROM pg_settings WHERE name LIKE 'todo.max\_%' ORDER BY name;
INSERT INTO todo.tenants (tenant_id) VALUES ('limits');
CREATE FUNCTION public.squeeze(t text) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT regexp_replace(t, '(([a-zA-Z])\2{9})\2+', '\1…', 'g') $$;
CREATE FUNCTION public.squeeze(j jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE
  AS $$ SELECT public.squeeze(j::text)::jsonb $$;

\connect - agent_login
\set ON_ERROR_ROLLBACK on
-- a plain role cannot raise (or lower) a limit: the library is preloaded (as
-- docs/operations.md asks), so the setting is known from the session's start and the SET is
-- refused. (Not preloaded, the SET would make a placeholder, dropped with a WARNING when the
-- library loads.)
SET todo.max_subject_length = 100000;
SELECT jsonb_typeof(todo.tools()) AS loaded;
SHOW todo.max_subject_length;
SET todo.max_subject_length = 100000;
SELECT set_config('todo.max_output_size', '100MB', false);
ALTER ROLE CURRENT_USER SET todo.max_message_size = '100MB';
SHOW todo.max_output_size;
-- the context is set outside psql's per-statement savepoints (on Citus a SET LOCAL made in a
-- savepoint is forgotten when it is released)
\set ON_ERROR_ROLLBACK off
BEGIN;
SELECT todo.set_context('limits', 'conv-1', 'agent-1');
\set ON_ERROR_ROLLBACK on
-- plain SQL: each free-text column over its limit is 22001, naming the column, its length,
-- the limit and the setting
INSERT INTO todo.todos (subject) VALUES (repeat('s', 1001));
INSERT INTO todo.todos (subject, active_form) VALUES ('x', repeat('a', 1001));
INSERT INTO todo.todos (subject, description) VALUES ('x', repeat('d', 20001));
INSERT INTO todo.todos (subject, outcome) VALUES ('x', repeat('o', 20001));
INSERT INTO todo.todos (subject, completion_criteria) VALUES ('x', repeat('c', 20001));
INSERT INTO todo.todos (subject, owner) VALUES ('x', repeat('w', 257));
INSERT INTO todo.todos (subject, external_id) VALUES ('x', repeat('e', 257));
INSERT INTO todo.todos (subject, agent_type) VALUES ('x', repeat('t', 257));
INSERT INTO todo.todos (subject, conversation_id) VALUES ('x', repeat('v', 257));
-- metadata is measured as its JSON text (what metadata::text prints), without building it
INSERT INTO todo.todos (subject, metadata) VALUES ('x', jsonb_build_object('k', repeat('m', 65530)));
SELECT octet_length(jsonb_build_object('k', repeat('m', 65530))::text) AS printed_bytes;
INSERT INTO todo.todos (subject, metadata) VALUES ('x', jsonb_build_object('n', 1e70000));
SELECT octet_length(jsonb_build_object('n', 1e70000)::text) AS printed_bytes;
\set VERBOSITY sqlstate
INSERT INTO todo.todos (subject) VALUES (repeat('s', 1001));
INSERT INTO todo.todos (subject, metadata) VALUES ('x', jsonb_build_object('k', repeat('m', 65530)));
UPDATE todo.todos SET subject = repeat('s', 1001);
\set VERBOSITY default
-- at the limit it is accepted; the limit counts characters, not bytes
INSERT INTO todo.todos (subject) VALUES (repeat('s', 1000)), (repeat('é', 1000)) RETURNING id, length(subject), octet_length(subject);
INSERT INTO todo.todos (subject, metadata) VALUES ('meta', jsonb_build_object('k', repeat('m', 65528))) RETURNING id, octet_length(metadata::text);
-- an UPDATE that makes a column too long is refused too
UPDATE todo.todos SET description = repeat('d', 20001) WHERE id = 1;
-- the writ: a value over its limit is that command's ERR: line; the others still run
SELECT squeeze(todo.todo_writ(E'/todo add ' || repeat('s', 1001) || E'\n/todo add fits\n/todo describe 1: ' || repeat('d', 20001)));
-- a message over todo.max_message_size, or with more than todo.max_writ_commands commands:
-- one block, and nothing runs
SELECT todo.todo_writ(E'/todo add too big\n' || repeat('x', 256 * 1024));
SELECT todo.todo_writ(string_agg('/todo add bulk ' || g, E'\n')) FROM generate_series(1, 201) g;
-- a tool: the column's error is the tool's error object; arguments over
-- todo.max_arguments_size are refused before they are parsed
SELECT squeeze(todo.call('TaskCreate', jsonb_build_object('subject', repeat('s', 1001), 'description', 'd')));
SELECT squeeze(todo.call('todowrite', jsonb_build_object('todos', jsonb_build_array(
  jsonb_build_object('content', 'fits', 'status', 'pending', 'priority', 'low'),
  jsonb_build_object('content', repeat('c', 1001), 'status', 'pending', 'priority', 'low')))));
SELECT todo.call('TaskCreate', jsonb_build_object('subject', 'big', 'description', repeat('d', 1024 * 1024)));
SELECT todo.call_mcp('TaskCreate', jsonb_build_object('subject', 'big', 'description', repeat('d', 1024 * 1024)));
SELECT squeeze(todo.call_mcp('TaskCreate', jsonb_build_object('subject', 'x', 'description', 'd', 'metadata', jsonb_build_object('k', repeat('m', 65530)))));
-- arguments are measured as the JSON text they print, before it is printed: ten numbers of
-- 131,072 digits each from 80 bytes of JSON, then two hundred (measuring stops 16 MiB past
-- the limit)
SELECT todo.call('TaskCreate', ('{"subject": "x", "description": "d", "metadata": {"n": [' || repeat('1e131071, ', 9) || '1e131071]}}')::jsonb);
SELECT todo.call_mcp('TaskCreate', ('{"subject": "x", "description": "d", "metadata": {"n": [' || repeat('1e131071, ', 199) || '1e131071]}}')::jsonb) -> 'structuredContent';
-- todo.rest: a body over todo.max_body_size is 413, before it is parsed; a column over its
-- limit is 422; a bulk PATCH that names a todo twice is 400 and writes nothing
SELECT todo.rest('POST', '/v1/todos', jsonb_build_object('subject', 'big', 'description', repeat('d', 1024 * 1024)));
SELECT todo.rest('POST', '/v1/todos', ('{"subject": "x", "n": [' || repeat('1e131071, ', 9) || '1e131071]}')::jsonb);
SELECT squeeze(todo.rest('POST', '/v1/todos', jsonb_build_object('subject', repeat('s', 1001))));
SELECT squeeze(todo.rest('PATCH', '/v1/todos/1', jsonb_build_object('description', repeat('d', 20001))));
SELECT todo.rest('PATCH', '/v1/todos', '[{"id": 1, "status": "in_progress"}, {"id": "1", "status": "completed"}]');
-- nothing of any refusal was written: the todos and their events are the accepted ones
SELECT id, length(subject) AS subject_length, status, description IS NULL AS no_description FROM todo.todos ORDER BY id;
SELECT todo_id, action, count(*) FROM todo.events GROUP BY 1, 2 ORDER BY 1, 2;
COMMIT;

-- the writ's output stops at todo.max_output_size (1 MiB): 200 lists of 100 todos would be
-- 2 MiB. The list that reaches the limit is cut, with a line that says so; the commands after
-- it do not run, and a last block says how many.
BEGIN;
SELECT todo.set_context('limits', 'conv-2', 'agent-1');
SELECT count(*) FROM (SELECT todo.todo_writ(string_agg('/todo add ' || g || ' ' || repeat('w', 80), E'\n')) FROM generate_series(1, 100) g) s;
SELECT octet_length(w) <= 1024 * 1024 AS within_limit,
       octet_length(w) > 1000 * 1024 AS filled,
       (SELECT count(*) FROM regexp_matches(w, '^\[/todo list\]$', 'gn')) AS lists_shown,
       squeeze(array_to_string((string_to_array(w, E'\n'))[array_length(string_to_array(w, E'\n'), 1) - 5:], E'\n')) AS last_lines
  FROM (SELECT todo.todo_writ(string_agg('/todo list', E'\n')) AS w FROM generate_series(1, 200)) s;
ROLLBACK;

\connect - postgres
-- a superuser raises a limit with SET: then the value is accepted. (No ON_ERROR_ROLLBACK from
-- here on: on Citus a SET LOCAL made inside its savepoints would not reach the workers.)
\set ON_ERROR_ROLLBACK off
-- identifiers share one btree index entry: their limit stops below what it holds
LOAD 'pg_todos';
SET todo.max_name_length = 301;
BEGIN;
SELECT todo.set_context('limits', 'conv-3', 'admin');
SET LOCAL todo.max_subject_length = 5000;
SHOW todo.max_subject_length;
INSERT INTO todo.todos (subject) VALUES (repeat('S', 4000)) RETURNING id, length(subject);
SET LOCAL todo.max_text_length = 2000000;
SET LOCAL todo.max_metadata_size = '128kB';
SELECT squeeze(todo.call('TaskCreate', jsonb_build_object('subject', repeat('s', 1001), 'description', repeat('d', 20001),
  'metadata', jsonb_build_object('k', repeat('m', 65530)))));
SET LOCAL todo.max_name_length = 300;
INSERT INTO todo.todos (subject, owner) VALUES ('owned', repeat('w', 300)) RETURNING length(owner);
SET LOCAL todo.max_writ_commands = 300;
SELECT count(*) AS blocks FROM regexp_split_to_table(todo.todo_writ((SELECT string_agg('/todo add bulk ' || g, E'\n') FROM generate_series(1, 250) g)), E'\n\n');
SET LOCAL todo.max_message_size = '512kB';
SELECT squeeze(todo.todo_writ(E'/todo add big message\n' || repeat('x', 256 * 1024) || E'\n/endtodo'));
SET LOCAL todo.max_body_size = '2MB';
SELECT todo.rest('POST', '/v1/todos', jsonb_build_object('subject', 'big body', 'description', repeat('d', 1100000))) -> 'status' AS status;
SET LOCAL todo.max_arguments_size = '2MB';
SELECT todo.call('TaskCreate', jsonb_build_object('subject', 'big arguments', 'description', repeat('d', 1024 * 1024))) AS created;
SELECT subject, length(description) FROM todo.todos WHERE subject LIKE 'big%' ORDER BY id;
COMMIT;
-- a row stored under a raised limit keeps working under the default: a change that leaves the
-- long column as it is passes; one that writes it again must fit
BEGIN;
SELECT todo.set_context('limits', 'conv-3', 'admin');
SHOW todo.max_subject_length;
SELECT id AS long_id FROM todo.todos WHERE length(subject) = 4000 \gset
SELECT squeeze(todo.todo_writ(E'/todo start ' || :long_id || E'\n/todo subject ' || :long_id || ': ' || repeat('S', 4001)));
UPDATE todo.todos SET subject = subject WHERE id = :long_id RETURNING status;
UPDATE todo.todos SET subject = subject || '!' WHERE id = :long_id;
ROLLBACK;
-- a small output limit, to show the cut: the open block, the preamble and the writ
BEGIN;
SELECT todo.set_context('limits', 'conv-4', 'admin');
SELECT count(*) FROM (SELECT todo.todo_writ(string_agg('/todo add ' || g || ' ' || repeat('w', 40), E'\n')) FROM generate_series(1, 100) g) s;
SET LOCAL todo.max_output_size = '4kB';
SELECT octet_length(todo.todo_open_block('conv-4')) <= 4096 AS block_within, octet_length(todo.todo_open_preamble('conv-4')) <= 4096 AS preamble_within;
SELECT squeeze(array_to_string(l[array_length(l, 1) - 2:], E'\n')) FROM (SELECT string_to_array(todo.todo_open_preamble('conv-4'), E'\n') AS l) s;
SELECT octet_length(w) <= 4096 AS within, squeeze(w) FROM (SELECT todo.todo_writ(E'/todo help\n/todo list\n/todo add after the limit\n/todo list') AS w) s;
SELECT count(*) AS not_added FROM todo.todos WHERE subject = 'after the limit';
ROLLBACK;
-- a role raised with ALTER ROLE … SET (by a superuser) gets its limit in its next session
ALTER ROLE agent_login SET todo.max_subject_length = 2000;
\connect - agent_login
SHOW todo.max_subject_length;
BEGIN;
SELECT todo.set_context('limits', 'conv-5', 'agent-1');
INSERT INTO todo.todos (subject) VALUES (repeat('s', 1500)) RETURNING length(subject);
ROLLBACK;
\connect - postgres
ALTER ROLE agent_login RESET todo.max_subject_length;
DELETE FROM todo.tenants WHERE tenant_id = 'limits';
DROP FUNCTION public.squeeze(text);
DROP FUNCTION public.squeeze(jsonb);
