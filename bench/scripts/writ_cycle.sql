-- todo_writ('/todo start N' / 'done N' / 'reopen N'): three transitions (reopen keeps the row cycling)
\set t random(1, :tenants)
\set c random(1, 20)
\set id (:c - 1) * 50 + random(1, 4)
SELECT todo.todo_writ('/todo start ' || :id || E'\n/todo done ' || :id || E'\n/todo reopen ' || :id) FROM todo.set_context('t' || :t, 'c' || :c, 'bench') s;
