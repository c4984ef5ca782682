-- id_ranges: a tenant's ids come from ranges (todo.id_ranges); an emptied range is refilled
-- from the counter. The refill once joined its pick of an empty range as FROM (… LIMIT 1
-- FOR UPDATE SKIP LOCKED): planned as a nested loop, the pick ran again for the second
-- range, skipped the row just locked, and gave two empty ranges the same new ids; every
-- second add then failed with 23505. The layout that did it: two empty ranges, slot 1
-- stored before slot 2, in a table with many tenants' ranges and fresh statistics.
\set VERBOSITY terse
INSERT INTO todo.tenants (tenant_id) SELECT 'filler-' || g FROM generate_series(1, 2000) g;
INSERT INTO todo.counters (tenant_id, last_id) SELECT 'filler-' || g, 32 FROM generate_series(1, 2000) g;
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) SELECT 'filler-' || g, 1, 10, 32 FROM generate_series(1, 2000) g;
INSERT INTO todo.tenants (tenant_id) VALUES ('ranges');
INSERT INTO todo.counters (tenant_id, last_id) VALUES ('ranges', 64);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('ranges', 1, 33, 32);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('ranges', 2, 65, 64);
ANALYZE todo.id_ranges;
ANALYZE todo.counters;
-- as a plain role: one add refills one range, the other stays empty
\connect - agent_login
\set VERBOSITY terse
BEGIN;
SELECT todo.set_context('ranges', 'c1', 'agent');
SELECT todo.todo_writ('/todo add first after the refill');
COMMIT;
\connect - postgres
SELECT slot, next_id, last_id FROM todo.id_ranges WHERE tenant_id = 'ranges' ORDER BY slot;
SELECT last_id FROM todo.counters WHERE tenant_id = 'ranges';
-- forty more adds: none collides
\connect - agent_login
\set VERBOSITY terse
DO $$
BEGIN
    FOR i IN 1..40 LOOP
        PERFORM todo.set_context('ranges', 'c1', 'agent');
        PERFORM todo.todo_writ('/todo add more ' || i);
    END LOOP;
END
$$;
\connect - postgres
SELECT count(*) AS todos, count(DISTINCT id) AS distinct_ids, min(id), max(id) FROM todo.todos WHERE tenant_id = 'ranges';
SELECT * FROM todo.verify_tenant('ranges');
-- todo.verify_tenant reports ranges that would hand out the same ids, and a range that
-- would hand out ids past the counter
INSERT INTO todo.tenants (tenant_id) VALUES ('overlap');
INSERT INTO todo.counters (tenant_id, last_id) VALUES ('overlap', 64);
INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ('overlap', 1, 33, 64), ('overlap', 2, 40, 64), ('overlap', 3, 60, 70);
SELECT * FROM todo.verify_tenant('overlap');
DELETE FROM todo.tenants WHERE tenant_id = 'overlap' OR tenant_id = 'ranges' OR tenant_id LIKE 'filler-%';
