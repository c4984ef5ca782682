-- todo.rest('POST', '/v1/todos', …): seed 000's create, context set in the same statement
\set t random(1, :tenants)
SELECT todo.rest('POST', '/v1/todos', '{"subject": "benchmark todo"}') FROM todo.set_context('t' || :t, 'adds', 'bench') s;
