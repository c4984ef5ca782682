-- pg_todos 1.0.0 -> 1.1.0: nothing lost, nothing written where it should not be. An id is never
-- handed to a second todo (rows that were are repaired), a whole-list write never touches what
-- its writer could not see, the trackers number their tasks from the store.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.1.0'" to load this file. \quit


-- An id is never given to a second todo. 1.0.0 let an INSERT name the id of a deleted todo:
-- the row it stored has no insert event of its own (the deleted todo's history holds that id's
-- versions), so it never reached the change feed, and every UPDATE or DELETE of it failed with
-- 23505 on events_pkey. Such a row is one whose id's last event is a delete. Each gets a fresh
-- id from its tenant's counter (no todo ever had it) and is written again through the row
-- trigger, which logs its insert event; the row itself is taken out with the triggers off
-- (session_replication_role = replica): it has no history of its own to end. What referred to
-- it follows it to the new id: its subtasks (an update event each), the waits on it and its
-- own, its checklist and comments. Its old id keeps the deleted todo's history. A tenant at a
-- time, each statement naming it (a distributed store is repaired on each tenant's worker).
DO $repair$
DECLARE
    t text;
    stuck bigint[];
    old_id bigint;
    new_id bigint;
    r todo.todos;
    moved text[] := '{}';
BEGIN
    FOR t IN SELECT n.tenant_id FROM todo.tenants n ORDER BY n.tenant_id LOOP
        SELECT array_agg(x.id ORDER BY x.id) INTO stuck
          FROM todo.todos x
         CROSS JOIN LATERAL (SELECT e.action FROM todo.events e
                              WHERE e.tenant_id = t AND e.todo_id = x.id
                              ORDER BY e.version DESC LIMIT 1) l
         WHERE x.tenant_id = t AND l.action = 'delete';
        CONTINUE WHEN stuck IS NULL;
        FOREACH old_id IN ARRAY stuck LOOP
            SELECT * INTO r FROM todo.todos x WHERE x.tenant_id = t AND x.id = old_id;
            UPDATE todo.counters c SET last_id = c.last_id + 1 WHERE c.tenant_id = t RETURNING c.last_id INTO new_id;
            PERFORM pg_catalog.set_config('session_replication_role', 'replica', true);
            DELETE FROM todo.todos x WHERE x.tenant_id = t AND x.id = old_id;
            PERFORM pg_catalog.set_config('session_replication_role', 'origin', true);
            r.id := new_id;
            INSERT INTO todo.todos SELECT r.*;
            UPDATE todo.todos x SET parent_id = new_id
             WHERE x.tenant_id = t AND x.parent_id = old_id AND x.id <> ALL (stuck);
            -- (a subtask stuck too is read again when its turn comes)
            PERFORM pg_catalog.set_config('session_replication_role', 'replica', true);
            UPDATE todo.todos x SET parent_id = new_id WHERE x.tenant_id = t AND x.parent_id = old_id;
            PERFORM pg_catalog.set_config('session_replication_role', 'origin', true);
            UPDATE todo.dependencies d SET todo_id = new_id WHERE d.tenant_id = t AND d.todo_id = old_id;
            UPDATE todo.dependencies d SET depends_on = new_id WHERE d.tenant_id = t AND d.depends_on = old_id;
            UPDATE todo.checklist_items i SET todo_id = new_id WHERE i.tenant_id = t AND i.todo_id = old_id;
            UPDATE todo.comments m SET todo_id = new_id WHERE m.tenant_id = t AND m.todo_id = old_id;
            moved := moved || format('%s: #%s is now #%s', t, old_id, new_id);
        END LOOP;
    END LOOP;
    IF cardinality(moved) > 0 THEN
        RAISE WARNING 'pg_todos 1.1.0 gave % todo(s) a new id: each had been added with the id of a deleted todo',
            cardinality(moved)
            USING DETAIL = array_to_string(moved, '; '),
                  HINT = 'they had no history of their own, so every change of them failed with 23505; under their new ids they can be changed, and todo.verify() reports none';
    END IF;
END
$repair$;
