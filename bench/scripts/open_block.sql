-- todo_open_block(conversation)
\set t random(1, :tenants)
\set c random(1, 20)
SELECT todo.todo_open_block('c' || :c) FROM todo.set_context('t' || :t) s;
