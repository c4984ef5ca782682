-- todo_writ('/todo list')
\set t random(1, :tenants)
\set c random(1, 20)
SELECT todo.todo_writ('/todo list') FROM todo.set_context('t' || :t, 'c' || :c) s;
