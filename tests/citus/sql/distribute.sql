-- distribute: todo.distribute() on the coordinator spreads the store over the two workers
-- (run after 00_setup, before every other test of the Citus tier).
SELECT * FROM todo.distribute();
-- idempotent: a second call changes nothing and says the same
SELECT * FROM todo.distribute();
SELECT pg_todos_version = (SELECT extversion FROM pg_extension WHERE extname = 'pg_todos') AS recorded
  FROM todo.distribution;
-- the shards of todo.todos are on both workers, the coordinator has none
SELECT n.nodeport - current_setting('port')::int AS worker, count(*) > 0 AS has_shards
  FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
 WHERE s.logicalrelid = 'todo.todos'::regclass GROUP BY 1 ORDER BY 1;
