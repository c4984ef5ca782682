-- todo.call('todowrite', 10 items): half the statuses flip each time
\set t random(1, :tenants)
\set l random(1, 5)
\set s random(0, 1)
SELECT todo.call('todowrite', jsonb_build_object('todos', (SELECT jsonb_agg(jsonb_build_object(
         'content', 'list item ' || k, 'status', CASE WHEN (k + :s) % 2 = 0 THEN 'completed' ELSE 'pending' END,
         'priority', 'medium') ORDER BY k) FROM generate_series(1, 10) k)))
  FROM todo.set_context('t' || :t, 'list-' || :l, 'bench') s;
