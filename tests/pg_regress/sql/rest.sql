-- rest: seed 000's /v1/todos routes through todo.rest(method, path, body): status codes,
-- body shapes (epoch seconds, completed_at 0 until terminal), filters, order, errors.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'api') \gset
-- timestamps are epoch seconds: show them as "is it now?" so the output is stable; "now" within
-- 5 s, since on Citus the row's stamps are a worker's, whose transaction (and clock) starts later
-- than the coordinator's, and a slow run crosses a second between them
CREATE FUNCTION pg_temp.show(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT CASE WHEN r->'body' ? 'todo' THEN
    jsonb_set(r, '{body,todo}', (r->'body'->'todo')
      || jsonb_build_object('created_at', abs((r->'body'->'todo'->>'created_at')::bigint - extract(epoch FROM now())) < 5,
                            'updated_at', abs((r->'body'->'todo'->>'updated_at')::bigint - extract(epoch FROM now())) < 5,
                            'completed_at', CASE WHEN (r->'body'->'todo'->>'completed_at')::bigint = 0 THEN to_jsonb(0)
                                                 ELSE to_jsonb(abs((r->'body'->'todo'->>'completed_at')::bigint - (r->'body'->'todo'->>'created_at')::bigint) < 5) END))
  ELSE r END $$;
-- POST
SELECT pg_temp.show(todo.rest('POST', '/v1/todos', '{"subject": "review the deploy status"}'));
SELECT pg_temp.show(todo.rest('POST', '/v1/todos', '{"subject": "write the post-mortem", "description": "timeline"}'));
SELECT pg_temp.show(todo.rest('POST', '/v1/todos', '{"subject": "file the rollback ticket", "conversation_id": null}'));
SELECT pg_temp.show(todo.rest('POST', '/v1/todos', '{"subject": "backfilled", "status": "completed"}'));
SELECT pg_temp.show(todo.rest('POST', '/v1/todos', '{"subject": "other thread", "conversation_id": "conv-2", "status": "in_progress"}'));
-- POST errors
SELECT todo.rest('POST', '/v1/todos', '{"description": "no subject"}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "status": "done"}');
SELECT todo.rest('POST', '/v1/todos', '["not", "an", "object"]');
SELECT todo.rest('POST', '/v1/todos');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "owner": "me"}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "   "}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "position": "first"}');
-- a whole number is an integer however written (1946.0), a fraction or one past bigint is not
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "position": 1.5}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "position": 1e30}');
-- GET one, and ids that are malformed or missing
SELECT pg_temp.show(todo.rest('GET', '/v1/todos/2'));
SELECT todo.rest('GET', '/v1/todos/99');
SELECT todo.rest('GET', '/v1/todos/abc');
SELECT todo.rest('GET', '/v1/todos/0');
-- GET list: a conversation gives its rows plus the pool; "tenant" the pool; none every row.
-- in_progress first, then pending by position, then terminal rows most recently updated first
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?conversation_id=conv-1'), '$.body.todos[*].id') AS conv_1;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?conversation_id=tenant'), '$.body.todos[*].id') AS pool;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos'), '$.body.todos[*].id') AS every_row;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?status=pending'), '$.body.todos[*].id') AS pending;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?status=cancelled'), '$.body.todos[*].id') AS canceled;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?agent_id=api&limit=2'), '$.body.todos[*].id') AS first_two;
SELECT jsonb_path_query_array(todo.rest('GET', '/v1/todos?conversation_id=conv%2D2'), '$.body.todos[*].id') AS encoded;
SELECT todo.rest('GET', '/v1/todos?limit=501');
SELECT todo.rest('GET', '/v1/todos?limit=x');
SELECT todo.rest('GET', '/v1/todos?status=done');
-- PATCH one
SELECT pg_temp.show(todo.rest('PATCH', '/v1/todos/1', '{"status": "in_progress", "subject": "review the canary deploy status"}'));
SELECT pg_temp.show(todo.rest('PATCH', '/v1/todos/1', '{"status": "completed"}'));
SELECT todo.rest('PATCH', '/v1/todos/1', '{"status": "in_progress"}');
SELECT todo.rest('PATCH', '/v1/todos/1', '{"owner": "me"}');
SELECT todo.rest('PATCH', '/v1/todos/99', '{"subject": "x"}');
SELECT todo.rest('PATCH', '/v1/todos/1', '"x"');
-- PATCH many: each item applied or refused on its own
SELECT todo.rest('PATCH', '/v1/todos', '[{"id": 2, "status": "in_progress"}, {"id": "3", "position": 1}, {"id": 99, "subject": "x"},
                                        {"id": 1, "status": "in_progress"}, {"subject": "no id"}, {"id": 5, "status": "bogus"}]')
       #- '{body,results,0,todo}' #- '{body,results,1,todo}';
-- a request that names one todo twice (2 and "2") is refused whole: nothing is written
SELECT todo.rest('PATCH', '/v1/todos', '[{"id": 3, "status": "completed"}, {"id": 2, "status": "completed"}, {"id": "2", "status": "pending"}]');
SELECT todo.rest('PATCH', '/v1/todos', '{"todos": []}');
SELECT todo.rest('PATCH', '/v1/todos', '{"items": []}');
SELECT todo.rest('PATCH', '/v1/todos', (SELECT jsonb_agg(jsonb_build_object('id', g)) FROM generate_series(1, 501) g));
SELECT id, subject, status, position FROM todo.todos ORDER BY id;
-- DELETE
SELECT todo.rest('DELETE', '/v1/todos/5');
SELECT todo.rest('DELETE', '/v1/todos/5');
-- unknown routes and methods
SELECT todo.rest('GET', '/v1/todo');
SELECT todo.rest('PUT', '/v1/todos/1', '{}');
SELECT todo.rest('DELETE', '/v1/todos');
rollback;
