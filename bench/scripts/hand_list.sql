-- one hand-written query returning the same text as the open block: index scan plus string_agg.
-- Open is pending, in progress, blocked, deferred or in review, as the open block counts them
-- (the data set has only pending and in-progress open todos, but the query gives the same text
-- on any data): in progress and in review first, then the waiting ones, each by position
\set t random(1, :tenants)
\set c random(1, 20)
SELECT 'Open todos (mark progress as you go — /todo start <id>, /todo done <id>):' || E'\n'
       || count(*) || ' open (' || count(*) FILTER (WHERE status = 'in_progress') || ' in progress, '
       || count(*) FILTER (WHERE status = 'pending') || ' pending'
       || CASE WHEN count(*) FILTER (WHERE status = 'blocked') > 0
               THEN ', ' || count(*) FILTER (WHERE status = 'blocked') || ' blocked' ELSE '' END
       || CASE WHEN count(*) FILTER (WHERE status = 'deferred') > 0
               THEN ', ' || count(*) FILTER (WHERE status = 'deferred') || ' deferred' ELSE '' END
       || CASE WHEN count(*) FILTER (WHERE status = 'review') > 0
               THEN ', ' || count(*) FILTER (WHERE status = 'review') || ' in review' ELSE '' END || E'):\n'
       || string_agg(CASE WHEN status = 'in_progress' THEN '▶ ' ELSE '' END || '#' || id || ' [' || status || '] '
                     || subject || CASE WHEN conversation_id IS NULL THEN ' (tenant-wide)' ELSE '' END,
                     E'\n' ORDER BY status NOT IN ('in_progress', 'review'), position, id)
  FROM plain.todos
 WHERE tenant_id = 't' || :t AND (conversation_id = 'c' || :c OR conversation_id IS NULL)
   AND status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review');
