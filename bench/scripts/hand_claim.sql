-- the hand-written claim with the same effects: the first ready todo (pending or under a
-- lapsed lease, not waiting for an open todo, no open subtasks; by priority then position)
-- taken with FOR UPDATE SKIP LOCKED, one event; then the release, one event
\set t random(1, :tenants)
\set c random(1, 20)
BEGIN;
UPDATE plain.todos u
   SET status = 'in_progress', claimed_by = 'bench', fence = u.fence + 1,
       lease_expires_at = now() + interval '300 s', started_at = coalesce(u.started_at, now()),
       updated_at = now(), version = u.version + 1
  FROM (SELECT t.tenant_id, t.id FROM plain.todos t
         WHERE t.tenant_id = 't' || :t AND (t.conversation_id = 'c' || :c OR t.conversation_id IS NULL)
           AND (t.status = 'pending' OR (t.status = 'in_progress' AND t.lease_expires_at <= now()))
           AND NOT EXISTS (SELECT 1 FROM plain.dependencies d JOIN plain.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                            WHERE d.tenant_id = t.tenant_id AND d.todo_id = t.id AND b.status IN ('pending', 'in_progress'))
           AND NOT EXISTS (SELECT 1 FROM plain.todos k WHERE k.tenant_id = t.tenant_id AND k.parent_id = t.id
                              AND k.status IN ('pending', 'in_progress'))
         ORDER BY CASE t.priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END, t.position, t.id
         LIMIT 1 FOR UPDATE OF t SKIP LOCKED) n
 WHERE u.tenant_id = n.tenant_id AND u.id = n.id
RETURNING u.id, u.fence, u.version \gset
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, old_status, new_status, changes)
VALUES ('t' || :t, :id, :version, 'update', 'c' || :c, 'bench', 'pending', 'in_progress', jsonb_build_object('fence', :fence::bigint, 'claimed_by', 'bench'));
UPDATE plain.todos SET status = 'pending', claimed_by = NULL, lease_expires_at = NULL, updated_at = now(), version = version + 1
 WHERE tenant_id = 't' || :t AND id = :id AND claimed_by = 'bench' AND fence = :fence AND lease_expires_at > now()
RETURNING version \gset
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, old_status, new_status, changes)
VALUES ('t' || :t, :id, :version, 'update', 'c' || :c, 'bench', 'in_progress', 'pending', jsonb_build_object('claimed_by', NULL));
COMMIT;
