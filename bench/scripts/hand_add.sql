-- the hand-written transaction with the same effects: allocate the id, insert the row, append the event
\set t random(1, :tenants)
BEGIN;
INSERT INTO plain.counters AS c VALUES ('t' || :t, 1) ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + 1 RETURNING last_id \gset
INSERT INTO plain.todos (tenant_id, id, conversation_id, subject, position, agent_id) VALUES ('t' || :t, :last_id, 'adds', 'benchmark todo', :last_id, 'bench');
INSERT INTO plain.events (tenant_id, todo_id, version, action, conversation_id, agent_id, new_status) VALUES ('t' || :t, :last_id, 1, 'insert', 'adds', 'bench', 'pending');
COMMIT;
