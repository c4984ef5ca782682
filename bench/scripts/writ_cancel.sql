-- todo_writ('/todo cancel N' / 'reopen N'): cancel a todo and reopen it (so the row keeps cycling)
\set t random(1, :tenants)
\set c random(1, 20)
\set id (:c - 1) * 50 + random(1, 4)
SELECT todo.todo_writ('/todo cancel ' || :id || E'\n/todo reopen ' || :id) FROM todo.set_context('t' || :t, 'c' || :c, 'bench') s;
