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
-- time, each statement naming it (a distributed store is repaired on each tenant's worker;
-- untested on Citus).
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
        -- (SET LOCAL statements, not set_config(): Citus sends SET statements on to the
        -- workers' sessions of this transaction, where the shards' triggers fire, when told to)
        EXECUTE 'SET LOCAL citus.propagate_set_commands = ''local''';
        FOREACH old_id IN ARRAY stuck LOOP
            SELECT * INTO r FROM todo.todos x WHERE x.tenant_id = t AND x.id = old_id;
            UPDATE todo.counters c SET last_id = c.last_id + 1 WHERE c.tenant_id = t RETURNING c.last_id INTO new_id;
            EXECUTE 'SET LOCAL session_replication_role = replica';
            DELETE FROM todo.todos x WHERE x.tenant_id = t AND x.id = old_id;
            EXECUTE 'SET LOCAL session_replication_role = origin';
            r.id := new_id;
            INSERT INTO todo.todos VALUES (r.*);
            UPDATE todo.todos x SET parent_id = new_id
             WHERE x.tenant_id = t AND x.parent_id = old_id AND x.id <> ALL (stuck);
            -- (a subtask stuck too is read again when its turn comes)
            EXECUTE 'SET LOCAL session_replication_role = replica';
            UPDATE todo.todos x SET parent_id = new_id WHERE x.tenant_id = t AND x.parent_id = old_id;
            EXECUTE 'SET LOCAL session_replication_role = origin';
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


-- A NULL argument is an error naming it (22004), as every other function's, not a NULL answer:
-- these functions are no longer STRICT (the Rust functions take Option and check). Their
-- definitions as a fresh install has them, and their comments (which now say so).
CREATE OR REPLACE FUNCTION todo."todo_writ"(
	"message" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'todo_writ_wrapper';
CREATE OR REPLACE FUNCTION todo."list_as"(
	"dialect" TEXT, /* Option < & str > */
	"conversation" TEXT /* Option < & str > */
) RETURNS jsonb /* Jsonb */
STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'list_as_wrapper';
CREATE OR REPLACE FUNCTION todo."block"(
	"todo_id" bigint, /* Option < i64 > */
	"on_id" bigint /* Option < i64 > */
) RETURNS bool /* bool */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'block_wrapper';
CREATE OR REPLACE FUNCTION todo."unblock"(
	"todo_id" bigint, /* Option < i64 > */
	"on_id" bigint /* Option < i64 > */
) RETURNS bool /* bool */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'unblock_wrapper';
CREATE OR REPLACE FUNCTION todo."ready"(
	"max_rows" INT DEFAULT 50 /* Option < i32 > */
) RETURNS TABLE (
	"id" bigint,  /* i64 */
	"subject" TEXT,  /* String */
	"status" TEXT,  /* String */
	"tenant_wide" bool  /* bool */
)
STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ready_wrapper';
CREATE OR REPLACE FUNCTION todo."changed_tenants"(
	"tenants" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"cursors" TEXT[] /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS TEXT[] /* Vec < String > */
STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'changed_tenants_wrapper';
CREATE OR REPLACE FUNCTION todo."acp_plan"(
	"conversation" TEXT /* Option < & str > */
) RETURNS jsonb /* Jsonb */
STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'acp_plan_wrapper';
CREATE OR REPLACE FUNCTION todo."export_tasks"(
	"conversation" TEXT /* Option < & str > */
) RETURNS jsonb /* Jsonb */
STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'export_tasks_wrapper';
CREATE OR REPLACE FUNCTION todo."import_tasks"(
	"conversation" TEXT, /* Option < & str > */
	"file_json" jsonb /* Option < JsonB > */
) RETURNS jsonb /* Jsonb */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'import_tasks_wrapper';
ALTER FUNCTION todo.changed_tenants(text[], text[]) SET todo.tenant = '';
COMMENT ON FUNCTION todo.todo_writ(text) IS
    'Runs every /todo command line of a message (seed 000) in the context''s conversation; returns each command echoed with its OK:/ERR: result and [END TODO]. A rule''s refusal is an ERR: line, never an error. Errors: 22004 a NULL message; 22023 no tenant in context; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a dialect''s shape: todo.dialects() lists the dialects that have one (list_shape) and what it is. Errors: 22004 a NULL dialect or conversation; 22023 a dialect with no list shape or none of that name, or no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.block(bigint, bigint) IS
    'Makes the first todo wait for the second while it is open; false when it waited already. Errors: 22004 a NULL todo_id or on_id; 22023 no tenant in context, a todo waiting for itself, or an edge that would close a cycle (the message shows the path); 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope; 0A000 in a REPEATABLE READ transaction.';
COMMENT ON FUNCTION todo.unblock(bigint, bigint) IS
    'Removes the wait of the first todo for the second; false when there was none. Errors: 22004 a NULL todo_id or on_id; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope.';
COMMENT ON FUNCTION todo.ready(integer) IS
    'The ready queue: open, unclaimed, unblocked todos in scope without open subtasks, in claim order, at most max_rows. Errors: 22004 a NULL max_rows; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.changed_tenants(text[], text[]) IS
    'Which of the tenants have changes their cursor (same position; one todo.changes_since returned) did not see: one statement per tick for a service following the log (pg_todos serve). Each is asked acting for it (a bound role only about its own). Errors: 22004 a NULL array, 22023 arrays of different lengths or a NULL, 54000 past 10,000 tenants, 22P02 a malformed cursor, 42501 a tenant the role may not act for.';
COMMENT ON FUNCTION todo.acp_plan(text) IS
    'A conversation''s list as an Agent Client Protocol v1 session/update "plan" ({"sessionUpdate": "plan", "entries": [{content, priority, status}]}). Errors: 22004 a NULL conversation; 22023 no tenant in context.';
COMMENT ON FUNCTION todo.export_tasks(text) IS
    'Seed 004''s task file of a conversation: {"tasks": [{id, title, description, done}]}, canceled todos left out; a list cut at todo.max_read_todos or todo.max_output_size says so in a top-level "omitted" field (and a NOTICE). Errors: 22004 a NULL conversation; 22023 no tenant in context.';
COMMENT ON FUNCTION todo.import_tasks(text, jsonb) IS
    'Replaces a conversation''s list with a seed 004 task file (matched by id, then title and place; left-out tasks deleted), only the tasks a read of the list shows: those past todo.max_read_todos or todo.max_output_size are kept as they are, counted in the answer''s "kept" field; returns the file after. Errors: 22004 a NULL conversation or file; 22023 a corrupt file or no tenant in context; 42704 tenant not registered.';

-- todo.stats() under row-level security with no tenant in context: refused in
-- todo.current_tenant()'s words before it reads, not by the policy from inside its statements
-- (the error showed their text as its CONTEXT).
CREATE OR REPLACE FUNCTION todo.stats(tenant text DEFAULT NULL) RETURNS TABLE (
    tenant_id              text,
    pending                bigint,
    in_progress            bigint,
    blocked                bigint,
    deferred               bigint,
    review                 bigint,
    completed              bigint,
    canceled               bigint,
    open_claims            bigint,
    lapsed_leases          bigint,
    oldest_open_id         bigint,
    oldest_open_updated_at timestamptz,
    events_last_hour       bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    t text;
    cutoff constant timestamptz := now() - interval '1 hour';
    max_events constant integer := 100000;
    lo numeric;
    hi numeric;
    mid numeric;
    seen_at timestamptz;
    err_state text;
    err_message text;
    err_hint text;
BEGIN
    IF NOT (has_table_privilege('todo.tenants', 'SELECT') AND has_table_privilege('todo.todos', 'SELECT')
            AND has_table_privilege('todo.events', 'SELECT')) THEN
        RAISE EXCEPTION 'todo.stats: role % may not read todo.tenants, todo.todos and todo.events', current_user
            USING ERRCODE = '42501',
                  HINT = 'call it as an administrator (every tenant) or as an app''s role, todo.grant_usage(role, tenant, plain_sql => true) (its tenant)';
    END IF;
    -- under row-level security the tenant in context decides what it reads: none (or one the
    -- role may not act for) is refused here, in todo.current_tenant()'s words, rather than by
    -- the policy from inside a statement of this function (whose text the error would show)
    IF row_security_active('todo.tenants') THEN
        BEGIN
            PERFORM todo.current_tenant();
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT, err_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = 'todo.stats: ' || err_message, HINT = err_hint;
        END;
    END IF;
    FOR t IN SELECT n.tenant_id FROM todo.tenants n
              WHERE stats.tenant IS NULL OR n.tenant_id = stats.tenant
              ORDER BY n.tenant_id
    LOOP
        tenant_id := t;
        SELECT count(*) FILTER (WHERE x.status = 'pending'), count(*) FILTER (WHERE x.status = 'in_progress'),
               count(*) FILTER (WHERE x.status = 'blocked'), count(*) FILTER (WHERE x.status = 'deferred'),
               count(*) FILTER (WHERE x.status = 'review'), count(*) FILTER (WHERE x.status = 'completed'),
               count(*) FILTER (WHERE x.status = 'canceled')
          INTO pending, in_progress, blocked, deferred, review, completed, canceled
          FROM todo.todos x
         WHERE x.tenant_id = t;
        SELECT count(*), count(*) FILTER (WHERE x.lease_expires_at < now())
          INTO open_claims, lapsed_leases
          FROM todo.todos x
         WHERE x.tenant_id = t AND x.status = 'in_progress' AND x.claimed_by IS NOT NULL;
        -- the open todo unchanged the longest: the oldest entry of each open status
        oldest_open_id := NULL;
        oldest_open_updated_at := NULL;
        SELECT o.id, o.updated_at INTO oldest_open_id, oldest_open_updated_at
          FROM ((SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'pending' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'in_progress' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'blocked' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'deferred' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'review' ORDER BY x.updated_at LIMIT 1)) o
         ORDER BY o.updated_at, o.id
         LIMIT 1;
        -- the events of the last hour, by their transactions: the newest first (none in the
        -- hour: 0), then the oldest (in the hour: all of them), else the bisection keeps lo's
        -- first event before the hour and hi's in it until they are adjacent
        hi := NULL;
        SELECT e.xact::text::numeric, e.event_at INTO hi, seen_at
          FROM todo.events e
         WHERE e.tenant_id = t AND e.xact IS NOT NULL
         ORDER BY e.xact DESC
         LIMIT 1;
        IF hi IS NULL OR seen_at < cutoff THEN
            events_last_hour := 0;
        ELSE
            SELECT e.xact::text::numeric, e.event_at INTO lo, seen_at
              FROM todo.events e
             WHERE e.tenant_id = t AND e.xact IS NOT NULL
             ORDER BY e.xact
             LIMIT 1;
            IF seen_at >= cutoff THEN
                hi := lo;
            ELSE
                WHILE hi - lo > 1 LOOP
                    mid := lo + div(hi - lo, 2);
                    SELECT e.event_at INTO seen_at
                      FROM todo.events e
                     WHERE e.tenant_id = t AND e.xact >= mid::text::xid8
                     ORDER BY e.xact
                     LIMIT 1;
                    IF seen_at >= cutoff THEN
                        hi := mid;
                    ELSE
                        lo := mid;
                    END IF;
                END LOOP;
            END IF;
            SELECT count(*) INTO events_last_hour
              FROM (SELECT FROM todo.events e
                     WHERE e.tenant_id = t AND e.xact >= hi::text::xid8
                     LIMIT max_events) s;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$fn$;

-- A whole-list write replaces only what a read of the list shows; a cut read says so in the
-- data (issue 52, part 1): the task files' functions say it (their comments above).
COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: taskmaster, beads, backlog, claude-todos, claude-tasks; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; a task whose todo no read of the list shows (past todo.max_read_todos or todo.max_output_size) is kept as it is, counted in "kept"; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';
