-- cycles: the cycle check of todo.dependencies on graphs with very many paths. It searches
-- breadth first and expands each todo once, so closing a cycle across a ladder of 22 layers
-- (2^21 paths between its ends) or a band of 10,000 edges is refused at once, with the
-- shortest path in the message, and an edge that closes no cycle is added. Through
-- todo.block, the writ, and plain SQL (the row trigger).
INSERT INTO todo.tenants (tenant_id) VALUES ('cyc_ladder'), ('cyc_band');
\set VERBOSITY terse
-- an SQL call's SQLSTATE and message, or ok
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
-- the path a refused edge names (from the todo that already waits to the one that would)
CREATE FUNCTION pg_temp.path_of(message text) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT string_to_array(replace(substring(message FROM '\(#([0-9# →]*)\)$'), '#', ''), ' → ')::bigint[]
$$;
-- whether each step of a path is an edge of the tenant's graph: a dependency, or a parent
-- waiting for its subtask
-- (PL/pgSQL: Citus plans no statement of an SQL function that has parameters)
CREATE FUNCTION pg_temp.is_walk(tenant text, path bigint[]) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. array_length(path, 1) - 1 LOOP
        IF NOT EXISTS (SELECT 1 FROM todo.dependencies d
                        WHERE d.tenant_id = tenant AND d.todo_id = path[i] AND d.depends_on = path[i + 1])
           AND NOT EXISTS (SELECT 1 FROM todo.todos c
                            WHERE c.tenant_id = tenant AND c.id = path[i + 1] AND c.parent_id = path[i]) THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN true;
END
$$;
-- A ladder of 22 layers: layer k (0 to 21) is #2k+1 and #2k+2, and each waits for both
-- todos of the layer before. #45 is a subtask of #1; #46 waits for nothing.
BEGIN;
SELECT todo.set_context('cyc_ladder', 'conv', 'planner');
INSERT INTO todo.todos (tenant_id, conversation_id, subject)
SELECT 'cyc_ladder', 'conv', 'rung ' || g FROM generate_series(1, 44) g;
INSERT INTO todo.todos (tenant_id, conversation_id, subject, parent_id) VALUES ('cyc_ladder', 'conv', 'a part of #1', 1);
INSERT INTO todo.todos (tenant_id, conversation_id, subject) VALUES ('cyc_ladder', 'conv', 'free');
INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on)
SELECT 'cyc_ladder', 2 * k + a, 2 * (k - 1) + b
  FROM generate_series(1, 21) k, generate_series(1, 2) a, generate_series(1, 2) b
 ORDER BY k DESC, a, b;
COMMIT;
SELECT count(*) AS edges, count(DISTINCT todo_id) AS waiting FROM todo.dependencies WHERE tenant_id = 'cyc_ladder';
-- closing the cycle between the ends: refused, the path through the lower id of each layer
BEGIN;
SELECT todo.set_context('cyc_ladder', 'conv', 'planner');
SELECT pg_temp.try('SELECT todo.block(1, 43)');
SELECT todo.todo_writ('/todo block 2 on 44');
SELECT pg_temp.try($$INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('cyc_ladder', 1, 44)$$);
-- through a subtask: #1 waits for its subtask #45, which cannot wait for the top
SELECT pg_temp.try('SELECT todo.block(45, 44)');
SELECT pg_temp.try($$INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('cyc_ladder', 45, 43)$$);
-- edges that close no cycle are added: above the top, and across the bottom layer
SELECT todo.block(46, 44) AS added, todo.block(1, 2) AS across;
SELECT pg_temp.try($$INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('cyc_ladder', 46, 43)$$);
-- the bottom now waits across its layer: #2 cannot wait for #1
SELECT todo.todo_writ('/todo block 2 on 1');
COMMIT;
SELECT count(*) AS edges FROM todo.dependencies WHERE tenant_id = 'cyc_ladder';
-- A band of 10,000 edges: #6 to #2005 each wait for the five todos just below them (more
-- paths from #2005 down to #1 than a search of paths could ever list). #2006 and #2007 wait
-- for nothing. Inserted top down, each row checked by the trigger.
BEGIN;
SELECT todo.set_context('cyc_band', 'conv', 'planner');
INSERT INTO todo.todos (tenant_id, conversation_id, subject)
SELECT 'cyc_band', 'conv', 'step ' || g FROM generate_series(1, 2007) g;
INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on)
SELECT 'cyc_band', i, i - s FROM generate_series(6, 2005) i, generate_series(1, 5) s ORDER BY i DESC, s;
COMMIT;
SELECT count(*) AS edges, count(DISTINCT todo_id) AS waiting FROM todo.dependencies WHERE tenant_id = 'cyc_band';
-- closing the cycle from the bottom to the top: refused, through the operation and plain
-- SQL. The path runs from #2005 to #1, every step an edge; each step goes at most five ids
-- down, so 401 steps is the shortest there is.
BEGIN;
SELECT todo.set_context('cyc_band', 'conv', 'planner');
WITH refused AS (
    SELECT m, pg_temp.path_of(m) AS path
      FROM unnest(ARRAY[pg_temp.try('SELECT todo.block(1, 2005)'),
                        pg_temp.try($$INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('cyc_band', 1, 2005)$$)]) m)
SELECT left(m, 70) AS message, path[1:3] AS first, path[array_length(path, 1) - 2:] AS last,
       array_length(path, 1) - 1 AS steps, pg_temp.is_walk('cyc_band', path) AS walk
  FROM refused;
-- an edge that closes no cycle, after a search of the whole band: added
SELECT todo.block(2006, 2005) AS added;
SELECT pg_temp.try($$INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('cyc_band', 2007, 2005)$$);
-- and a cycle through the new edge is refused at its one step
SELECT pg_temp.try('SELECT todo.block(2005, 2006)');
COMMIT;
SELECT count(*) AS edges FROM todo.dependencies WHERE tenant_id = 'cyc_band';
-- the ladder's invariants hold (todo.verify's own cycle search walks every pair of a todo
-- and a todo it waits for: two million in the band, too slow for a test)
SELECT * FROM todo.verify_tenant('cyc_ladder');
-- leave nothing behind
DELETE FROM todo.tenants WHERE tenant_id IN ('cyc_ladder', 'cyc_band');
SELECT count(*) AS todos_left FROM todo.todos WHERE tenant_id IN ('cyc_ladder', 'cyc_band');
