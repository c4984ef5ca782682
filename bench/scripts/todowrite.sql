-- todo.call('todowrite', 10 items): half the statuses flip each time. The argument is JSON
-- text, as a client sends it (one of two lists, by :s), turned into jsonb in each call
\set t random(1, :tenants)
\set l random(1, 5)
\set s random(0, 1)
SELECT todo.call('todowrite', (CASE WHEN :s::int = 0
         THEN '{"todos":[{"content":"list item 1","status":"pending","priority":"medium"},{"content":"list item 2","status":"completed","priority":"medium"},{"content":"list item 3","status":"pending","priority":"medium"},{"content":"list item 4","status":"completed","priority":"medium"},{"content":"list item 5","status":"pending","priority":"medium"},{"content":"list item 6","status":"completed","priority":"medium"},{"content":"list item 7","status":"pending","priority":"medium"},{"content":"list item 8","status":"completed","priority":"medium"},{"content":"list item 9","status":"pending","priority":"medium"},{"content":"list item 10","status":"completed","priority":"medium"}]}'
         ELSE '{"todos":[{"content":"list item 1","status":"completed","priority":"medium"},{"content":"list item 2","status":"pending","priority":"medium"},{"content":"list item 3","status":"completed","priority":"medium"},{"content":"list item 4","status":"pending","priority":"medium"},{"content":"list item 5","status":"completed","priority":"medium"},{"content":"list item 6","status":"pending","priority":"medium"},{"content":"list item 7","status":"completed","priority":"medium"},{"content":"list item 8","status":"pending","priority":"medium"},{"content":"list item 9","status":"completed","priority":"medium"},{"content":"list item 10","status":"pending","priority":"medium"}]}' END)::jsonb)
  FROM todo.set_context('t' || :t, 'list-' || :l, 'bench') s;
