-- hostile: a caller's own objects named like ours (a `todos` table, `lower`, `btrim`, `md5`,
-- `jsonb_populate_record`, an `=` operator that is always true) and a hostile search_path
-- change no result of any surface, reads or writes: every function pins search_path =
-- pg_catalog, todo, pg_temp and every statement names its relations with the schema.
-- Runs as the plain login role agent_login, which owns the hostile schema and a temp table.
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_a');
CREATE SCHEMA evil AUTHORIZATION agent_login;
\connect - agent_login
BEGIN;
SELECT todo.set_context('tenant_a', 'conv-a', 'agent') \gset
SELECT todo.todo_writ(E'/todo add Review the deploy\n/todo add write the post-mortem\n/todo start review') IS NOT NULL AS seeded;
-- every surface, with the normal search_path: reads, then writes (rolled back)
SELECT todo.todo_writ('/todo list all') AS writ, todo.todo_open_block('conv-a') AS block,
       todo.call('todoread', '{}') AS todoread, todo.call('todolist__get', '{}') AS todolist,
       todo.rest('GET', '/v1/todos?conversation_id=conv-a') AS rest, todo.channel() AS channel \gset
SAVEPOINT before_writes;
SELECT todo.todo_writ(E'/todo done WRITE THE\n/todo add third\n/todo subject 1: renamed') AS writ_w,
       todo.call('todolist__set', '{"todos": [{"content": "renamed", "status": "completed", "activeForm": "Renaming"}, {"content": "fourth", "status": "in_progress", "activeForm": "Fourthing"}]}') AS set_w,
       todo.rest('PATCH', '/v1/todos/4', '{"status": "completed"}') - 'x' AS rest_w \gset
-- the state after the writes, read through a function (on Citus a plain read of placements a
-- SECURITY DEFINER call modified in this transaction is refused)
SELECT todo.todo_writ('/todo list all') AS state_w \gset
ROLLBACK TO SAVEPOINT before_writes;
-- lay the traps
CREATE TABLE evil.todos (tenant_id text, id bigint, subject text, status text, conversation_id text, position bigint);
INSERT INTO evil.todos VALUES ('tenant_a', 1, 'FORGED', 'in_progress', 'conv-a', 0);
CREATE TEMP TABLE todos (LIKE evil.todos);
INSERT INTO todos SELECT * FROM evil.todos;
CREATE FUNCTION evil.lower(text) RETURNS text LANGUAGE sql AS $$ SELECT 'forged' $$;
CREATE FUNCTION evil.btrim(text) RETURNS text LANGUAGE sql AS $$ SELECT 'forged' $$;
CREATE FUNCTION evil.md5(text) RETURNS text LANGUAGE sql AS $$ SELECT 'forged' $$;
CREATE FUNCTION evil.texteq_always(text, text) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.texteq_always);
CREATE FUNCTION evil.jsonb_populate_record(anyelement, jsonb) RETURNS anyelement LANGUAGE sql AS $$ SELECT $1 $$;
SET LOCAL search_path = evil, pg_catalog, pg_temp, public;
-- the traps work on the caller's own queries...
SELECT lower('X') AS caller_lower, 'a' = 'b' AS caller_equals, (SELECT subject FROM todos) AS caller_todos;
-- ...and change nothing in ours (compared with pg_catalog's own =)
SELECT todo.todo_writ('/todo list all') OPERATOR(pg_catalog.=) :'writ' AS writ_same,
       todo.todo_open_block('conv-a') OPERATOR(pg_catalog.=) :'block' AS block_same,
       todo.call('todoread', '{}') OPERATOR(pg_catalog.=) :'todoread'::jsonb AS todoread_same,
       todo.call('todolist__get', '{}') OPERATOR(pg_catalog.=) :'todolist'::jsonb AS todolist_same,
       todo.rest('GET', '/v1/todos?conversation_id=conv-a') OPERATOR(pg_catalog.=) :'rest'::jsonb AS rest_same,
       todo.channel() OPERATOR(pg_catalog.=) :'channel' AS channel_same;
SELECT todo.todo_writ(E'/todo done WRITE THE\n/todo add third\n/todo subject 1: renamed') OPERATOR(pg_catalog.=) :'writ_w' AS writ_writes_same,
       todo.call('todolist__set', '{"todos": [{"content": "renamed", "status": "completed", "activeForm": "Renaming"}, {"content": "fourth", "status": "in_progress", "activeForm": "Fourthing"}]}') OPERATOR(pg_catalog.=) :'set_w'::jsonb AS set_same,
       todo.rest('PATCH', '/v1/todos/4', '{"status": "completed"}') - 'x' OPERATOR(pg_catalog.=) :'rest_w'::jsonb AS rest_writes_same;
SELECT todo.todo_writ('/todo list all') OPERATOR(pg_catalog.=) :'state_w' AS state_same;
ROLLBACK;
\connect - postgres
DROP SCHEMA evil CASCADE;
DELETE FROM todo.tenants WHERE tenant_id = 'tenant_a';
-- a NUL character never reaches a tool (whose reply could echo it): a tool's arguments are
-- jsonb, which refuses one (22P05) before the call
BEGIN;
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_nul');
SELECT todo.set_context('tenant_nul', 'conv') \gset
SELECT todo.call('create_todo', '{"items": [{"title": "x", "bo\u0000gus": true}]}');
ROLLBACK;
-- NULL for any argument of any function: the store's own error, never an internal one
-- (XX000 from the glue between PostgreSQL and Rust, "argument 0 must not be null", as
-- todo.call, todo.rest, todo.finish, … answered up to 0.9.0). Every function that is not
-- STRICT, called with all NULLs, then with NULL in one place at a time (the others a value
-- of their type that the function may refuse), in a rolled-back subtransaction each.
BEGIN;
INSERT INTO todo.tenants (tenant_id) VALUES ('tenant_null');
CREATE TEMP TABLE internal_errors (call text, sqlstate text, message text);
DO $$
DECLARE
    p record;
    k int;
    args text[];
    q text;
    st text;
    m text;
BEGIN
    FOR p IN SELECT f.proname, f.proargtypes::regtype[] AS types, f.pronargs
               FROM pg_proc f
              WHERE f.pronamespace = 'todo'::regnamespace AND f.prokind = 'f' AND NOT f.proisstrict
                AND f.prorettype <> 'trigger'::regtype AND f.proname NOT IN ('distribute')
              ORDER BY f.proname, f.oid LOOP
        FOR k IN 0..p.pronargs LOOP
            args := ARRAY[]::text[];
            FOR i IN 1..p.pronargs LOOP
                args := args || CASE WHEN k = 0 OR i = k THEN format('NULL::%s', p.types[i - 1])
                                     WHEN p.types[i - 1] IN ('text'::regtype) THEN '''1'''
                                     WHEN p.types[i - 1] IN ('jsonb'::regtype) THEN '''{}''::jsonb'
                                     WHEN p.types[i - 1] IN ('regrole'::regtype) THEN '''postgres''::regrole'
                                     ELSE format('1::%s', p.types[i - 1]) END;
            END LOOP;
            q := format('SELECT todo.%I(%s)', p.proname, array_to_string(args, ', '));
            BEGIN
                PERFORM todo.set_context('tenant_null', 'conv', 'agent');
                EXECUTE q;
                RAISE EXCEPTION 'undo' USING ERRCODE = 'P0001';
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, m = MESSAGE_TEXT;
                IF st = 'XX000' OR m ~ '\.rs\M|pgrx|must not be null$' THEN
                    INSERT INTO internal_errors VALUES (q, st, m);
                END IF;
            END;
        END LOOP;
    END LOOP;
END
$$;
SELECT * FROM internal_errors ORDER BY 1;
ROLLBACK;
-- each refusal names the argument
SELECT todo.finish(NULL);
SELECT todo.call(NULL, '{}');
SELECT todo.rest('GET', NULL);
