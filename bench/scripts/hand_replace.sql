-- the hand-written replace of a 10-item list, as issue 54 states it: the diff against the
-- stored list (its rows locked), in one statement: delete the missing, update the changed,
-- insert the new (ids from the counter), one event each. The same list as todowrite.sql sends
-- (by :s, statuses alternating), matched by subject; the ids of the todos it keeps stay.
\set t random(1, :tenants)
\set l random(1, 5)
\set s random(0, 1)
BEGIN;
-- one plan kept for every call (a custom plan of this statement costs 2 M instructions to make)
SET LOCAL plan_cache_mode = force_generic_plan;
WITH sent AS (
  SELECT k, 'list item ' || k AS subject,
         CASE WHEN (k + :s) % 2 = 0 THEN 'completed' ELSE 'pending' END AS status
    FROM generate_series(1, 10) k),
stored AS MATERIALIZED (
  SELECT t.id, t.subject, t.status, t.version FROM plain.todos t
   WHERE t.tenant_id = 't' || :t AND t.conversation_id = 'list-' || :l FOR UPDATE),
removed AS (
  DELETE FROM plain.todos t USING stored
   WHERE t.tenant_id = 't' || :t AND t.id = stored.id AND stored.subject NOT IN (SELECT subject FROM sent)
  RETURNING t.id, t.version + 1 AS version, stored.status),
changed AS (
  UPDATE plain.todos t SET status = sent.status, updated_at = now(), version = t.version + 1,
         completed_at = CASE WHEN sent.status = 'completed' THEN now() END
    FROM stored JOIN sent USING (subject)
   WHERE t.tenant_id = 't' || :t AND t.id = stored.id AND stored.status <> sent.status
  RETURNING t.id, t.version, stored.status AS old_status, t.status AS new_status),
fresh AS (
  SELECT sent.*, row_number() OVER (ORDER BY k) AS n FROM sent
   WHERE sent.subject NOT IN (SELECT subject FROM stored)),
counter AS (
  UPDATE plain.counters c SET last_id = c.last_id + (SELECT count(*) FROM fresh)
   WHERE c.tenant_id = 't' || :t AND EXISTS (SELECT FROM fresh)
  RETURNING c.last_id - (SELECT count(*) FROM fresh) AS first),
added AS (
  INSERT INTO plain.todos (tenant_id, id, conversation_id, subject, status, position, agent_id, completed_at)
  SELECT 't' || :t, counter.first + fresh.n, 'list-' || :l, fresh.subject, fresh.status,
         counter.first + fresh.n, 'bench', CASE WHEN fresh.status = 'completed' THEN now() END
    FROM fresh, counter
  RETURNING id, status)
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, old_status, new_status)
SELECT 't' || :t, id, version, 'delete', 'list-' || :l, 'bench', status, NULL FROM removed
UNION ALL
SELECT 't' || :t, id, version, 'update', 'list-' || :l, 'bench', old_status, new_status FROM changed
UNION ALL
SELECT 't' || :t, id, 1, 'insert', 'list-' || :l, 'bench', NULL, status FROM added;
COMMIT;
