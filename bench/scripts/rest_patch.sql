-- todo.rest('PATCH', '/v1/todos/N', …) twice in one statement: start a todo, then put it back
\set t random(1, :tenants)
\set c random(1, 20)
\set id (:c - 1) * 50 + random(1, 4)
SELECT todo.rest('PATCH', '/v1/todos/' || :id, '{"status": "in_progress"}'),
       todo.rest('PATCH', '/v1/todos/' || :id, '{"status": "pending"}')
  FROM todo.set_context('t' || :t, 'c' || :c, 'bench') s;
