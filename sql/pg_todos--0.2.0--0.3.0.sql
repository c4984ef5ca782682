-- pg_todos 0.2.0 → 0.3.0: multi-agent coordination: claims with leases and
-- fencing, dependencies, the ready queue, subtasks.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.3.0'" to load this file. \quit

-- Subtasks and claims: four columns at the end of todo.todos (a fresh install has them in
-- the same place), their constraints and the parent index.
ALTER TABLE todo.todos
    ADD COLUMN parent_id        bigint,
    ADD COLUMN claimed_by       text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN fence            bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT todos_parent_fkey FOREIGN KEY (tenant_id, parent_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE SET NULL (parent_id),
    ADD CONSTRAINT todos_parent_id_check CHECK (parent_id <> id),
    ADD CONSTRAINT todos_claim_check
        CHECK ((claimed_by IS NULL) = (lease_expires_at IS NULL) AND (claimed_by IS NULL OR status = 'in_progress'));
COMMENT ON COLUMN todo.todos.parent_id IS 'The todo this one is a subtask of (same tenant); NULL when the parent is deleted.';
COMMENT ON COLUMN todo.todos.claimed_by IS 'The agent holding a claim on this in_progress todo (with lease_expires_at); NULL: unclaimed.';
COMMENT ON COLUMN todo.todos.lease_expires_at IS 'When the claim lapses unless renewed (todo.heartbeat); after it the todo is claimable again.';
COMMENT ON COLUMN todo.todos.fence IS 'Fencing number: bumped by every claim; an action that presents an older one is rejected.';
-- A parent's subtasks (the progress shown in the open block).
CREATE INDEX todos_parent ON todo.todos (tenant_id, parent_id) WHERE parent_id IS NOT NULL;

-- "todo_id waits for depends_on": todo_id is blocked while depends_on is open (pending or
-- in_progress). Both ends are todos of the same tenant; the graph has no cycles (checked
-- by todo.block under a per-tenant lock).
CREATE TABLE todo.dependencies (
    tenant_id  text NOT NULL,
    todo_id    bigint NOT NULL,
    depends_on bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, todo_id, depends_on),
    CONSTRAINT dependencies_todo_fkey FOREIGN KEY (tenant_id, todo_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT dependencies_depends_on_fkey FOREIGN KEY (tenant_id, depends_on)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT dependencies_check CHECK (todo_id <> depends_on)
);
COMMENT ON TABLE todo.dependencies IS 'Blocking edges: todo_id waits for depends_on while depends_on is open.';
CREATE INDEX dependencies_depends_on ON todo.dependencies (tenant_id, depends_on);
REVOKE ALL ON todo.dependencies FROM PUBLIC;
ALTER TABLE todo.dependencies ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.dependencies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.dependencies
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.dependencies', '');

-- The dependency graph stays acyclic whoever writes it (src/triggers.rs).
CREATE FUNCTION todo.dependencies_before_insert()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'dependencies_before_insert_wrapper';
ALTER FUNCTION todo.dependencies_before_insert() SET search_path = pg_catalog, todo, pg_temp;
CREATE TRIGGER dependencies_before_insert BEFORE INSERT ON todo.dependencies
    FOR EACH ROW EXECUTE FUNCTION todo.dependencies_before_insert();

-- The event log records claims (claimed_by, fence) and parents; an insert's fence (0) is
-- left out. (sql/bootstrap.sql, verbatim.)
CREATE OR REPLACE FUNCTION todo.todos_log_event() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    diff jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A restore (pg_restore and psql replaying a dump set row_security = off) brings each
        -- row with its history: its events come from the dump, in whatever order the tables
        -- are restored. ON CONFLICT: another bulk load may bring the insert event first.
        IF current_setting('row_security') = 'off' THEN
            RETURN NULL;
        END IF;
        INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                 agent_id, turn_id, old_status, new_status, changes)
        VALUES (NEW.tenant_id, NEW.id, NEW.version, 'insert', NEW.conversation_id,
                coalesce(todo.current_agent(), NEW.agent_id), coalesce(todo.current_turn(), NEW.turn_id),
                NULL, NEW.status,
                jsonb_strip_nulls(to_jsonb(NEW) - ARRAY['tenant_id', 'id', 'version', 'created_at', 'updated_at', 'fence']))
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
        IF NEW.parent_id IS DISTINCT FROM OLD.parent_id THEN diff := diff || jsonb_build_object('parent_id', NEW.parent_id); END IF;
        IF NEW.claimed_by IS DISTINCT FROM OLD.claimed_by THEN diff := diff || jsonb_build_object('claimed_by', NEW.claimed_by); END IF;
        IF NEW.fence IS DISTINCT FROM OLD.fence THEN diff := diff || jsonb_build_object('fence', NEW.fence); END IF;
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

-- Roles set up with todo.grant_usage at 0.2.0 get the dependency table too (what
-- todo.grant_usage now grants): every role that may insert todos.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT DISTINCT a.grantee::regrole::text AS grantee
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'todo.todos'::regclass AND a.privilege_type = 'INSERT'
                AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON todo.dependencies TO %s', r.grantee);
    END LOOP;
END
$$;
CREATE OR REPLACE FUNCTION todo.grant_usage(role regrole) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    EXECUTE format('GRANT SELECT ON todo.tenants TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON todo.counters TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.todos TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT ON todo.events TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON todo.dependencies TO %s', role);
END
$fn$;

-- todo.verify() also checks claims and the dependency graph (sql/verify.sql, verbatim).
CREATE OR REPLACE FUNCTION todo.verify() RETURNS TABLE (tenant_id text, todo_id bigint, problem text)
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
    UNION ALL
    -- a claim is held only on an in_progress todo, with a lease (also a CHECK constraint)
    SELECT t.tenant_id, t.id, format('claimed by %s but %s, lease %s', t.claimed_by, t.status,
                                     coalesce(t.lease_expires_at::text, 'unset'))
      FROM todo.todos t
     WHERE t.claimed_by IS NOT NULL AND (t.status <> 'in_progress' OR t.lease_expires_at IS NULL)
    UNION ALL
    -- the dependency graph has no cycle
    SELECT DISTINCT w.tenant_id, w.start_id, 'waits for itself through a cycle of dependencies'
      FROM (WITH RECURSIVE walk(tenant_id, start_id, at) AS (
                SELECT d.tenant_id, d.todo_id, d.depends_on FROM todo.dependencies d
                UNION
                SELECT w.tenant_id, w.start_id, d.depends_on
                  FROM walk w JOIN todo.dependencies d ON d.tenant_id = w.tenant_id AND d.todo_id = w.at)
            SELECT * FROM walk) w
     WHERE w.at = w.start_id
$fn$;
COMMENT ON FUNCTION todo.verify() IS
    'The store''s invariants (stamps agree with status, counters, event log, claims, no dependency cycles): one row per violation.';

-- The coordination functions (src/coord.rs).
CREATE FUNCTION todo."block"(
	"todo_id" bigint, /* i64 */
	"on_id" bigint /* i64 */
) RETURNS bool /* bool */
STRICT VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_block_wrapper';

CREATE FUNCTION todo."claim"(
	"todo_id" bigint DEFAULT NULL, /* Option < i64 > */
	"lease_seconds" INT DEFAULT NULL /* Option < i32 > */
) RETURNS TABLE (
	"id" bigint,  /* i64 */
	"subject" TEXT,  /* String */
	"fence" bigint,  /* i64 */
	"lease_expires_at" timestamp with time zone  /* TimestampWithTimeZone */
)
VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_claim_wrapper';

CREATE FUNCTION todo."finish"(
	"todo_id" bigint, /* i64 */
	"fence" bigint DEFAULT NULL, /* Option < i64 > */
	"status" TEXT DEFAULT 'completed', /* & str */
	"outcome" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS void
VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_finish_wrapper';

CREATE FUNCTION todo."heartbeat"(
	"todo_id" bigint, /* i64 */
	"fence" bigint DEFAULT NULL, /* Option < i64 > */
	"lease_seconds" INT DEFAULT NULL /* Option < i32 > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_heartbeat_wrapper';

CREATE FUNCTION todo."ready"(
	"max_rows" INT DEFAULT 50 /* i32 */
) RETURNS TABLE (
	"id" bigint,  /* i64 */
	"subject" TEXT,  /* String */
	"status" TEXT,  /* String */
	"tenant_wide" bool  /* bool */
)
STRICT STABLE PARALLEL RESTRICTED 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_ready_wrapper';

CREATE FUNCTION todo."release"(
	"todo_id" bigint, /* i64 */
	"fence" bigint DEFAULT NULL /* Option < i64 > */
) RETURNS void
VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_release_wrapper';

CREATE FUNCTION todo."unblock"(
	"todo_id" bigint, /* i64 */
	"on_id" bigint /* i64 */
) RETURNS bool /* bool */
STRICT VOLATILE PARALLEL UNSAFE 
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'sql_unblock_wrapper';

COMMENT ON FUNCTION todo.claim(bigint, integer) IS
    'Claims a todo (or the next ready one) for the agent in context, with a lease: (id, subject, fence, lease_expires_at); no row when nothing is ready.';
COMMENT ON FUNCTION todo.heartbeat(bigint, bigint, integer) IS
    'Renews the lease of a todo the agent in context holds; returns when it now ends.';
COMMENT ON FUNCTION todo.release(bigint, bigint) IS
    'Gives back a todo the agent in context holds: pending and unclaimed again.';
COMMENT ON FUNCTION todo.finish(bigint, bigint, text, text) IS
    'Completes or cancels a todo; refused under another agent''s live claim or a stale fence.';
COMMENT ON FUNCTION todo.block(bigint, bigint) IS
    'Makes the first todo wait for the second while it is open; refuses cycles.';
COMMENT ON FUNCTION todo.unblock(bigint, bigint) IS
    'Removes the wait of the first todo for the second.';
COMMENT ON FUNCTION todo.ready(integer) IS
    'The ready queue: open, unclaimed, unblocked todos in scope without open subtasks, in claim order.';
