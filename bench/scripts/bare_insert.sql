-- the floor: one bare INSERT into an equivalent plain table with an identity id
\set t random(1, :tenants)
INSERT INTO plain.bare (tenant_id, conversation_id, subject, agent_id) VALUES ('t' || :t, 'adds', 'benchmark todo', 'bench');
