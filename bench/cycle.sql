-- bench/cycle.sh's graphs and its timer (schema bench, in the benchmark's own database).
SET client_min_messages = warning;
CREATE SCHEMA bench;

-- A ladder of `layers` layers for tenant t (conversation conv): layer k is #2k+1 and #2k+2,
-- each waiting for both todos of the layer before (2^(layers-1) paths between the ends),
-- and #2·layers+1 waiting for nothing. Built top down, so each insert's search is short.
CREATE FUNCTION bench.ladder(t text, layers int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO todo.tenants (tenant_id) VALUES (t);
    PERFORM todo.set_context(t, 'conv', 'bench');
    INSERT INTO todo.todos (tenant_id, conversation_id, subject)
    SELECT t, 'conv', 'rung ' || g FROM generate_series(1, 2 * layers + 1) g;
    INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on)
    SELECT t, 2 * k + a, 2 * (k - 1) + b
      FROM generate_series(1, layers - 1) k, generate_series(1, 2) a, generate_series(1, 2) b
     ORDER BY k DESC, a, b;
END $$;

-- A band of `edges` edges (a multiple of 5) for tenant t: #6 … #n (n = edges/5 + 5) each wait
-- for the five todos just below them; #n+1 waits for nothing.
CREATE FUNCTION bench.band(t text, edges int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO todo.tenants (tenant_id) VALUES (t);
    PERFORM todo.set_context(t, 'conv', 'bench');
    INSERT INTO todo.todos (tenant_id, conversation_id, subject)
    SELECT t, 'conv', 'step ' || g FROM generate_series(1, edges / 5 + 6) g;
    INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on)
    SELECT t, i, i - s FROM generate_series(6, edges / 5 + 5) i, generate_series(1, 5) s ORDER BY i DESC, s;
END $$;

-- Runs stmt `runs` times in tenant t's context, each in a subtransaction rolled back after
-- it (the graph stays as it was); the median time in ms and what the last run answered:
-- "refused (N todos in the path)", "accepted" or the error.
CREATE FUNCTION bench.timed(t text, stmt text, runs int, OUT ms numeric, OUT outcome text) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    times numeric[] := '{}';
    answer text;
BEGIN
    PERFORM todo.set_context(t, 'conv', 'bench');
    FOR r IN 1 .. runs LOOP
        BEGIN
            t0 := clock_timestamp();
            EXECUTE stmt INTO answer;
            times := times || (extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric;
            RAISE SQLSTATE 'P0B01';
        EXCEPTION
            WHEN SQLSTATE 'P0B01' THEN NULL;
            WHEN OTHERS THEN
                times := times || (extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric;
                answer := SQLSTATE || ': ' || SQLERRM;
        END;
    END LOOP;
    outcome := CASE
        WHEN answer LIKE '%would make a cycle%' THEN
            format('refused (path of %s todos)', length(substring(answer FROM '\((#[^)]*)\)')) -
                                                 length(replace(substring(answer FROM '\((#[^)]*)\)'), '#', '')))
        WHEN answer LIKE '%OK: %' OR answer IN ('ok', 't', 'f') THEN 'accepted'
        ELSE left(answer, 60) END;
    SELECT round(percentile_disc(0.5) WITHIN GROUP (ORDER BY x), 2) INTO ms FROM unnest(times) x;
END $$;
