-- todo.call('todolist__set', 10 items): half the statuses flip each time
\set t random(1, :tenants)
\set l random(1, 5)
\set s random(0, 1)
SELECT todo.call('todolist__set', jsonb_build_object('todos', (SELECT jsonb_agg(jsonb_build_object(
         'content', 'list item ' || k, 'status', CASE WHEN (k + :s) % 2 = 0 THEN 'completed' ELSE 'pending' END,
         'activeForm', 'doing item ' || k) ORDER BY k) FROM generate_series(1, 10) k)))
  FROM todo.set_context('t' || :t, 'list-' || :l, 'bench') s;
