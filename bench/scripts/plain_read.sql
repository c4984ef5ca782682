-- the floor for a tenant's read: one indexed query of one conversation in plain SQL, run as
-- the tables' owner (no row-level security, no context): what Citus routes to one worker
\set t random(1, :tenants)
\set c random(1, 20)
SELECT id, status, subject FROM todo.todos WHERE tenant_id = 't' || :t AND conversation_id = 'c' || :c ORDER BY position;
