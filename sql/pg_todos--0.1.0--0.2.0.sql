-- pg_todos 0.1.0 → 0.2.0
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.2.0'" to load this file. \quit

-- todo.call and todo.rest hand their JSON to the library as text, so that arguments nested
-- too deeply to convert get an error object (or a 400) instead of a conversion error.
CREATE FUNCTION todo.call_json("tool" TEXT, "args" TEXT) RETURNS jsonb
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'call_json_wrapper';

CREATE OR REPLACE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $$ SELECT todo.call_json(tool, args::text) $$;
COMMENT ON FUNCTION todo.call(text, jsonb) IS
    'Runs one tool of todo.tools() by name with its input object and returns its output object.';

CREATE FUNCTION todo.rest_json("method" TEXT, "path" TEXT, "body" TEXT) RETURNS jsonb
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'rest_json_wrapper';

CREATE OR REPLACE FUNCTION todo.rest(method text, path text, body jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $$ SELECT todo.rest_json(method, path, body::text) $$;
COMMENT ON FUNCTION todo.rest(text, text, jsonb) IS
    'Answers one /v1/todos request (seed 000) as {"status": <http status>, "body": <json>}.';

-- todo.events references todo.tenants, not todo.counters: its foreign-key check no longer
-- locks the counter row, which every insert of a todo updates.
ALTER TABLE todo.events DROP CONSTRAINT events_tenant_id_fkey;
ALTER TABLE todo.events ADD CONSTRAINT events_tenant_id_fkey
    FOREIGN KEY (tenant_id) REFERENCES todo.tenants (tenant_id) ON DELETE CASCADE;

-- The event-log trigger compares the columns one by one instead of diffing two jsonb
-- documents (same events, a fraction of the cost).
CREATE OR REPLACE FUNCTION todo.todos_log_event() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    diff jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- ON CONFLICT: a restore replays todo.events before todo.todos; the row's insert
        -- event is then already there.
        INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                 agent_id, turn_id, old_status, new_status, changes)
        VALUES (NEW.tenant_id, NEW.id, NEW.version, 'insert', NEW.conversation_id,
                coalesce(todo.current_agent(), NEW.agent_id), coalesce(todo.current_turn(), NEW.turn_id),
                NULL, NEW.status,
                jsonb_strip_nulls(to_jsonb(NEW) - ARRAY['tenant_id', 'id', 'version', 'created_at', 'updated_at']))
        ON CONFLICT DO NOTHING;
    ELSIF TG_OP = 'UPDATE' THEN
        -- the changed columns (stamps aside), with their new values; one test per column
        diff := '{}';
        IF NEW.conversation_id IS DISTINCT FROM OLD.conversation_id THEN diff := diff || jsonb_build_object('conversation_id', NEW.conversation_id); END IF;
        IF NEW.turn_id IS DISTINCT FROM OLD.turn_id THEN diff := diff || jsonb_build_object('turn_id', NEW.turn_id); END IF;
        IF NEW.agent_id IS DISTINCT FROM OLD.agent_id THEN diff := diff || jsonb_build_object('agent_id', NEW.agent_id); END IF;
        IF NEW.subject IS DISTINCT FROM OLD.subject THEN diff := diff || jsonb_build_object('subject', NEW.subject); END IF;
        IF NEW.description IS DISTINCT FROM OLD.description THEN diff := diff || jsonb_build_object('description', NEW.description); END IF;
        IF NEW.active_form IS DISTINCT FROM OLD.active_form THEN diff := diff || jsonb_build_object('active_form', NEW.active_form); END IF;
        IF NEW.status IS DISTINCT FROM OLD.status THEN diff := diff || jsonb_build_object('status', NEW.status); END IF;
        IF NEW.priority IS DISTINCT FROM OLD.priority THEN diff := diff || jsonb_build_object('priority', NEW.priority); END IF;
        IF NEW.position IS DISTINCT FROM OLD.position THEN diff := diff || jsonb_build_object('position', NEW.position); END IF;
        IF NEW.completion_criteria IS DISTINCT FROM OLD.completion_criteria THEN diff := diff || jsonb_build_object('completion_criteria', NEW.completion_criteria); END IF;
        IF NEW.agent_type IS DISTINCT FROM OLD.agent_type THEN diff := diff || jsonb_build_object('agent_type', NEW.agent_type); END IF;
        IF NEW.outcome IS DISTINCT FROM OLD.outcome THEN diff := diff || jsonb_build_object('outcome', NEW.outcome); END IF;
        IF NEW.created_at IS DISTINCT FROM OLD.created_at THEN diff := diff || jsonb_build_object('created_at', NEW.created_at); END IF;
        IF NEW.started_at IS DISTINCT FROM OLD.started_at THEN diff := diff || jsonb_build_object('started_at', NEW.started_at); END IF;
        IF NEW.completed_at IS DISTINCT FROM OLD.completed_at THEN diff := diff || jsonb_build_object('completed_at', NEW.completed_at); END IF;
        IF diff <> '{}' THEN
            INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                     agent_id, turn_id, old_status, new_status, changes)
            VALUES (NEW.tenant_id, NEW.id, NEW.version, 'update', NEW.conversation_id,
                    todo.current_agent(), todo.current_turn(), OLD.status, NEW.status, diff);
        END IF;
    ELSE
        -- When the whole tenant is being deleted its counter row is gone (or going): there
        -- is no history left to append to.
        IF EXISTS (SELECT 1 FROM todo.counters WHERE tenant_id = OLD.tenant_id) THEN
            INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                     agent_id, turn_id, old_status, new_status, changes)
            VALUES (OLD.tenant_id, OLD.id, OLD.version + 1, 'delete', OLD.conversation_id,
                    todo.current_agent(), todo.current_turn(), OLD.status, NULL, NULL);
        END IF;
    END IF;
    RETURN NULL;
END
$fn$;

-- todo.verify(): the store's invariants (sql/verify.sql, verbatim).

-- todo.verify(): the store's invariants, one row per violation (none: all hold). Runs as the
-- caller: under row-level security it checks the tenant in context; a superuser checks all.
CREATE FUNCTION todo.verify() RETURNS TABLE (tenant_id text, todo_id bigint, problem text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    -- completed_at is set exactly when the todo is terminal
    SELECT t.tenant_id, t.id, format('status %s but completed_at %s', t.status,
                                     CASE WHEN t.completed_at IS NULL THEN 'unset' ELSE 'set' END)
      FROM todo.todos t
     WHERE (t.completed_at IS NOT NULL) <> (t.status IN ('completed', 'canceled'))
    UNION ALL
    SELECT t.tenant_id, t.id, 'in_progress but started_at unset'
      FROM todo.todos t WHERE t.status = 'in_progress' AND t.started_at IS NULL
    UNION ALL
    SELECT t.tenant_id, t.id, 'updated_at before created_at'
      FROM todo.todos t WHERE t.updated_at < t.created_at
    UNION ALL
    -- the tenant's counter is past every id it handed out
    SELECT t.tenant_id, max(t.id), format('id %s above the tenant counter %s', max(t.id), c.last_id)
      FROM todo.todos t LEFT JOIN todo.counters c ON c.tenant_id = t.tenant_id
     GROUP BY t.tenant_id, c.last_id
    HAVING max(t.id) > coalesce(c.last_id, 0)
    UNION ALL
    -- the event log accounts for every todo: its insert, and its last status
    SELECT t.tenant_id, t.id, 'no insert event'
      FROM todo.todos t
     WHERE NOT EXISTS (SELECT 1 FROM todo.events e
                        WHERE e.tenant_id = t.tenant_id AND e.todo_id = t.id AND e.action = 'insert')
    UNION ALL
    SELECT t.tenant_id, t.id, format('row is %s but its last event says %s', t.status, l.new_status)
      FROM todo.todos t
     CROSS JOIN LATERAL (SELECT e.new_status FROM todo.events e
                          WHERE e.tenant_id = t.tenant_id AND e.todo_id = t.id
                          ORDER BY e.version DESC LIMIT 1) l
     WHERE l.new_status IS DISTINCT FROM t.status
    UNION ALL
    -- and every change starts where the one before it ended
    SELECT e.tenant_id, e.todo_id,
           format('event %s starts from %s but event %s ended at %s', e.version, e.old_status, e.prev_version, e.prev_status)
      FROM (SELECT ev.tenant_id, ev.todo_id, ev.version, ev.action, ev.old_status,
                   lag(ev.version) OVER w AS prev_version, lag(ev.new_status) OVER w AS prev_status
              FROM todo.events ev
            WINDOW w AS (PARTITION BY ev.tenant_id, ev.todo_id ORDER BY ev.version)) e
     WHERE e.action <> 'insert' AND e.prev_version IS NOT NULL AND e.old_status IS DISTINCT FROM e.prev_status
$fn$;
COMMENT ON FUNCTION todo.verify() IS
    'The store''s invariants (stamps agree with status, counters, event log): one row per violation.';
