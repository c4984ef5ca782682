-- todo_writ('/todo add …'): one call, context set in the same statement
\set t random(1, :tenants)
SELECT todo.todo_writ('/todo add benchmark todo') FROM todo.set_context('t' || :t, 'adds', 'bench') s;
