-- the hand-written replace of a 10-item list: delete it, allocate 10 ids, insert 10 rows
\set t random(1, :tenants)
\set l random(1, 5)
\set s random(0, 1)
BEGIN;
DELETE FROM plain.todos WHERE tenant_id = 't' || :t AND conversation_id = 'list-' || :l;
UPDATE plain.counters SET last_id = last_id + 10 WHERE tenant_id = 't' || :t RETURNING last_id \gset
INSERT INTO plain.todos (tenant_id, id, conversation_id, subject, status, position, agent_id, completed_at)
SELECT 't' || :t, :last_id - 10 + k, 'list-' || :l, 'list item ' || k,
       CASE WHEN (k + :s) % 2 = 0 THEN 'completed' ELSE 'pending' END, :last_id - 10 + k, 'bench',
       CASE WHEN (k + :s) % 2 = 0 THEN now() END
  FROM generate_series(1, 10) k;
COMMIT;
