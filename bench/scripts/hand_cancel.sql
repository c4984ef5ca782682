-- the hand-written UPDATEs with the same effects: cancel and reopen, with stamps and events
\set t random(1, :tenants)
\set c random(1, 20)
\set id (:c - 1) * 50 + random(1, 4)
BEGIN;
UPDATE plain.todos SET status = 'canceled', completed_at = now(), updated_at = now(), version = version + 1 WHERE tenant_id = 't' || :t AND id = :id RETURNING version \gset
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, old_status, new_status) VALUES ('t' || :t, :id, :version, 'update', 'c' || :c, 'bench', 'pending', 'canceled');
UPDATE plain.todos SET status = 'pending', completed_at = NULL, updated_at = now(), version = version + 1 WHERE tenant_id = 't' || :t AND id = :id RETURNING version \gset
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, old_status, new_status) VALUES ('t' || :t, :id, :version, 'update', 'c' || :c, 'bench', 'canceled', 'pending');
COMMIT;
