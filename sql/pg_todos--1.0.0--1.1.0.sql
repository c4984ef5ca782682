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
    tenants text[];
    coordinator boolean;
BEGIN
    -- on a Citus worker (which runs this script too) nothing: the coordinator's update reaches
    -- the shards
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        EXECUTE 'SELECT citus_is_coordinator()' INTO STRICT coordinator;
        IF NOT coordinator THEN
            RETURN;
        END IF;
    END IF;
    SELECT array_agg(n.tenant_id ORDER BY n.tenant_id) INTO tenants FROM todo.tenants n;
    FOREACH t IN ARRAY coalesce(tenants, '{}') LOOP
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

-- The trackers' numbering (issue 52, part 5): Task Master's and Backlog.md's next ids come from
-- the store (todo.caller_numbers), not from a list read a long list cuts, and agents creating at
-- once no longer take the same one.
-- The trackers' numbering (src/store/numbers.rs): per list and series of caller ids (Task
-- Master's `5`, its subtasks' `5.`, Backlog.md's `TASK-`), the last number handed out. A
-- create locks its row with INSERT … ON CONFLICT DO UPDATE, so the creators of one series of
-- one list wait for each other there (and for no one else) and never take the same number.
-- Written only by the extension.
CREATE TABLE todo.caller_numbers (
    tenant_id       text NOT NULL,
    conversation_id text NOT NULL,
    prefix          text NOT NULL,
    last_number     bigint NOT NULL CONSTRAINT caller_numbers_last_number_check CHECK (last_number >= 0),
    PRIMARY KEY (tenant_id, conversation_id, prefix)
);
COMMENT ON TABLE todo.caller_numbers IS 'The trackers'' numbering: per list and series of caller ids, the last number handed out (Task Master''s task ids, Backlog.md''s TASK-n); written by the extension.';
COMMENT ON COLUMN todo.caller_numbers.tenant_id IS 'The tenant whose list it is.';
COMMENT ON COLUMN todo.caller_numbers.conversation_id IS 'The list (todo.todos.conversation_id) whose caller ids it numbers.';
COMMENT ON COLUMN todo.caller_numbers.prefix IS 'The series: what precedes the number in its caller ids, upper-cased (empty for Task Master''s tasks, 5. for the subtasks of task 5, TASK- for Backlog.md''s tasks).';
COMMENT ON COLUMN todo.caller_numbers.last_number IS 'The last number handed out (0: none yet); the next is one more than the largest number of the series the list holds, and for Backlog.md''s series (never reused) than this too.';
-- its key to todo.tenants: now on one server; on a distributed store todo.distribute(), the
-- step after the update, distributes the table and then adds the key (as for todo.locks)
DO $do$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        ALTER TABLE todo.caller_numbers ADD CONSTRAINT caller_numbers_tenant_id_fkey
            FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
    END IF;
END
$do$;
REVOKE ALL ON todo.caller_numbers FROM PUBLIC;
ALTER TABLE todo.caller_numbers ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.caller_numbers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.caller_numbers
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.caller_numbers', '');

-- Seeded from the tasks already stored: each list's Task Master tasks (bare numbers), the
-- subtasks of each of its tasks (5.2: series 5.), and Backlog.md's tasks and subtasks (TASK-3,
-- TASK-3.1: series TASK- and TASK-3.), each series at its largest number. (A create also moves
-- past what its list holds, so a series seeded here is one the trackers find at once.)
-- (On a Citus worker, which runs this script too, nothing: the table is still the coordinator's
-- alone until todo.distribute(), which moves its rows.)
DO $seed$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT (SELECT citus_is_coordinator()) THEN
            RETURN;
        END IF;
    END IF;
    INSERT INTO todo.caller_numbers (tenant_id, conversation_id, prefix, last_number)
    SELECT t.tenant_id, t.conversation_id, upper(m[1]), max(m[2]::bigint)
      FROM todo.todos t
     CROSS JOIN LATERAL regexp_match(t.external_id, '^((?:TASK-)?(?:[0-9]+\.)*)([0-9]{1,18})$', 'i') m
     WHERE t.conversation_id IS NOT NULL AND t.external_id IS NOT NULL AND m IS NOT NULL AND m[2]::bigint > 0
     GROUP BY t.tenant_id, t.conversation_id, upper(m[1]);
END
$seed$;

-- todo.grant_usage and todo.revoke_usage name the new table (an app's role reads it)
CREATE OR REPLACE FUNCTION todo.grant_usage(role regrole, tenant text DEFAULT NULL, plain_sql boolean DEFAULT true) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    was todo.roles;
    granted boolean;
    fn regprocedure;
BEGIN
    IF grant_usage.role IS NULL OR grant_usage.plain_sql IS NULL THEN
        RAISE EXCEPTION 'todo.grant_usage: role and plain_sql must not be NULL'
            USING ERRCODE = '22004', HINT = 'todo.grant_usage(''<role>'', ''<tenant>'' or NULL, plain_sql => true or false)';
    END IF;
    SELECT * INTO was FROM todo.roles r WHERE r.role = grant_usage.role;
    granted := FOUND;
    IF granted AND was.tenant_id IS DISTINCT FROM grant_usage.tenant THEN
        RAISE EXCEPTION 'todo.grant_usage: role % is granted already, %', grant_usage.role,
                CASE WHEN was.tenant_id IS NULL THEN 'for any tenant' ELSE format('bound to tenant "%s"', was.tenant_id) END
            USING ERRCODE = '55000', HINT = 'a grant never changes a role''s tenant: todo.revoke_usage(role) first, then grant it again';
    END IF;
    -- a new binding names a registered tenant (granting again keeps one whose tenant is gone)
    IF grant_usage.tenant IS NOT NULL AND NOT granted THEN
        IF NOT EXISTS (SELECT 1 FROM todo.tenants t WHERE t.tenant_id = grant_usage.tenant) THEN
            RAISE EXCEPTION 'todo.grant_usage: tenant "%" is not registered', grant_usage.tenant
                USING ERRCODE = '42704', HINT = 'INSERT INTO todo.tenants (tenant_id) VALUES (...) first';
        END IF;
        IF (SELECT a.rolsuper OR a.rolbypassrls FROM pg_roles a WHERE a.oid = grant_usage.role) THEN
            RAISE EXCEPTION 'todo.grant_usage: role % bypasses row-level security, so it cannot be bound to a tenant', grant_usage.role
                USING ERRCODE = '22023', HINT = 'bind a plain role (NOSUPERUSER NOBYPASSRLS)';
        END IF;
    END IF;
    -- tables: an app's plain SQL on todo.todos and the dependencies, reads of the tenant's row,
    -- history and id counters; never the event log's, counters' or locks' writes (the
    -- extension makes them). An agent's role: no table at all, so it cannot lock or scan one.
    -- (the tables by name: on a Citus worker, ALL TABLES IN SCHEMA would take in the shards)
    EXECUTE format('REVOKE ALL ON todo.tenants, todo.counters, todo.id_ranges, todo.todos, todo.events, todo.dependencies, '
                   'todo.checklist_items, todo.comments, todo.locks, todo.caller_numbers, todo.roles, todo.tokens, todo.needs_attention FROM %s', grant_usage.role);
    IF grant_usage.plain_sql THEN
        EXECUTE format('GRANT SELECT ON todo.tenants TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.todos TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT ON todo.events TO %s', grant_usage.role);
        -- read-only: todo.verify() checks the ids against them; the trackers' numbering
        EXECUTE format('GRANT SELECT ON todo.counters, todo.id_ranges, todo.caller_numbers TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON todo.dependencies TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.checklist_items, todo.comments TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT ON todo.needs_attention TO %s', grant_usage.role);
    END IF;
    -- functions: every one but an administrator's (they run as the extension's owner and
    -- act only for the tenant in context, which a bound role cannot choose)
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'todo'::regnamespace AND p.prorettype <> 'trigger'::regtype
           AND p.proname NOT IN ('grant_usage', 'revoke_usage', 'create_token', 'revoke_token', 'distribute')
         ORDER BY p.oid
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, grant_usage.role);
    END LOOP;
    INSERT INTO todo.roles AS r (role, tenant_id, plain_sql)
    VALUES (grant_usage.role, grant_usage.tenant, grant_usage.plain_sql)
    ON CONFLICT ON CONSTRAINT roles_pkey DO UPDATE SET plain_sql = excluded.plain_sql;
END
$fn$;
COMMENT ON FUNCTION todo.grant_usage(regrole, text, boolean) IS
    'Grants a role the use of pg_todos. tenant: the one tenant it may ever act for (NULL: any, for a service such as pg_todos serve). plain_sql: true for an app (plain SQL on todo.todos, todo.dependencies, todo.checklist_items and todo.comments, reads of its history), false for an agent (the functions only). Idempotent; never changes a role''s tenant. Errors: 22004 a NULL role or plain_sql, 42704 unknown tenant, 55000 granted already with another tenant, 22023 a role that bypasses row-level security bound to a tenant.';

CREATE OR REPLACE FUNCTION todo.revoke_usage(role regrole) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    IF revoke_usage.role IS NULL THEN
        RAISE EXCEPTION 'todo.revoke_usage: role must not be NULL'
            USING ERRCODE = '22004', HINT = 'todo.revoke_usage(''<role>'')';
    END IF;
    EXECUTE format('REVOKE ALL ON todo.tenants, todo.counters, todo.id_ranges, todo.todos, todo.events, todo.dependencies, '
                   'todo.checklist_items, todo.comments, todo.locks, todo.caller_numbers, todo.roles, todo.tokens, todo.needs_attention FROM %s', revoke_usage.role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA todo FROM %s', revoke_usage.role);
    DELETE FROM todo.roles r WHERE r.role = revoke_usage.role;
    RETURN FOUND;
END
$fn$;

DO $grant$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM todo.roles LOOP
        PERFORM todo.grant_usage(r.role, r.tenant_id, r.plain_sql);
    END LOOP;
END
$grant$;

-- todo.distribute() colocates the new table with todo.todos (run it once after the update on a
-- distributed store)
CREATE OR REPLACE FUNCTION todo.distribute()
RETURNS TABLE (relation regclass, distribution text)
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    ours text;
    citus text;
    grant_stmt text;
    bad record;
    rel text;
    kind text;
    reference constant text[] := ARRAY['todo.tenants', 'todo.tokens', 'todo.distribution'];
    colocated constant text[] := ARRAY['todo.todos', 'todo.counters', 'todo.id_ranges', 'todo.events', 'todo.dependencies', 'todo.checklist_items', 'todo.comments', 'todo.locks', 'todo.caller_numbers'];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'todo.distribute: Citus is not installed in database %', current_database()
            USING ERRCODE = '55000',
                  HINT = 'add citus to shared_preload_libraries, CREATE EXTENSION citus, add the workers (citus_add_node), then call todo.distribute() again';
    END IF;
    IF NOT pg_has_role(current_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'todo.todos'::regclass), 'USAGE') THEN
        RAISE EXCEPTION 'todo.distribute: only the owner of the pg_todos tables (or a superuser) may distribute them; % may not', current_user
            USING ERRCODE = '42501', HINT = 'connect as the role that created the extension';
    END IF;
    IF NOT citus_is_coordinator() THEN
        RAISE EXCEPTION 'todo.distribute: this node is not the Citus coordinator'
            USING ERRCODE = '55000', HINT = 'call todo.distribute() on the coordinator';
    END IF;
    SELECT e.extversion INTO ours FROM pg_extension e WHERE e.extname = 'pg_todos';
    FOR bad IN
        SELECT w.nodename, w.nodeport, w.success, w.result
          FROM run_command_on_workers($$SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'), 'none')$$) w
         WHERE NOT w.success OR w.result IS DISTINCT FROM ours
    LOOP
        RAISE EXCEPTION 'todo.distribute: worker %:% has pg_todos %, the coordinator %', bad.nodename, bad.nodeport,
                CASE WHEN bad.success THEN bad.result ELSE '(unreachable: ' || bad.result || ')' END, ours
            USING ERRCODE = '55000',
                  HINT = 'install pg_todos ' || ours || ' on every worker (its files; CREATE EXTENSION on the coordinator reaches the workers) and ALTER EXTENSION pg_todos UPDATE there';
    END LOOP;

    -- Citus cannot distribute a foreign key that sets the distribution column's row to NULL
    -- (ON DELETE SET NULL (parent_id)): the triggers take over (see todos_orphan_subtasks).
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'todos_parent_fkey' AND conrelid = 'todo.todos'::regclass) THEN
        ALTER TABLE todo.todos DROP CONSTRAINT todos_parent_fkey;
    END IF;

    SET LOCAL citus.enable_unsafe_triggers = on;
    SET LOCAL citus.enable_local_reference_table_foreign_keys = off;
    SET LOCAL citus.multi_shard_modify_mode = 'sequential';
    FOREACH rel IN ARRAY reference LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = rel::regclass) THEN
            PERFORM create_reference_table(rel::regclass);
        END IF;
    END LOOP;
    FOREACH rel IN ARRAY colocated LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = rel::regclass) THEN
            PERFORM create_distributed_table(rel::regclass, 'tenant_id',
                colocate_with => CASE WHEN rel = 'todo.todos' THEN 'default' ELSE 'todo.todos' END);
        END IF;
    END LOOP;

    -- a store updated to 1.0.0 while distributed has the checkable lists and comments
    -- without their keys to todo.todos
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'checklist_items_todo_fkey' AND conrelid = 'todo.checklist_items'::regclass) THEN
        ALTER TABLE todo.checklist_items ADD CONSTRAINT checklist_items_todo_fkey FOREIGN KEY (tenant_id, todo_id)
            REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'comments_todo_fkey' AND conrelid = 'todo.comments'::regclass) THEN
        ALTER TABLE todo.comments ADD CONSTRAINT comments_todo_fkey FOREIGN KEY (tenant_id, todo_id)
            REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
    END IF;

    -- a store updated to 1.1.0 while distributed has todo.caller_numbers without its key to todo.tenants
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'caller_numbers_tenant_id_fkey' AND conrelid = 'todo.caller_numbers'::regclass) THEN
        ALTER TABLE todo.caller_numbers ADD CONSTRAINT caller_numbers_tenant_id_fkey
            FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
    END IF;

    -- a store updated to 0.9.0 while distributed has todo.locks without its key to todo.tenants
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'locks_tenant_id_fkey' AND conrelid = 'todo.locks'::regclass) THEN
        ALTER TABLE todo.locks ADD CONSTRAINT locks_tenant_id_fkey
            FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
    END IF;

    -- The workers' copies of the tables (created with the extension) have only their own
    -- privileges: grant again what the coordinator's tables grant (todo.grant_usage), now
    -- that Citus carries a GRANT on a distributed table to every node.
    FOR grant_stmt IN
        SELECT format('GRANT %s ON %s TO %s', a.privilege_type, c.oid::regclass,
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END)
          FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
          LEFT JOIN pg_roles r ON r.oid = a.grantee
         WHERE c.oid = ANY (ARRAY(SELECT x::regclass FROM unnest(reference || colocated) x)) AND a.grantee <> c.relowner
    LOOP
        EXECUTE grant_stmt;
    END LOOP;

    -- SET LOCAL todo.* in an app's transaction reaches the workers (new sessions)
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');

    SELECT e.extversion INTO citus FROM pg_extension e WHERE e.extname = 'citus';
    INSERT INTO todo.distribution (pg_todos_version, citus_version) VALUES (ours, citus)
    ON CONFLICT (singleton) DO NOTHING;

    FOREACH rel IN ARRAY reference || colocated LOOP
        SELECT CASE p.partmethod WHEN 'n' THEN 'reference' ELSE 'distributed by tenant_id' END
          INTO kind FROM pg_dist_partition p WHERE p.logicalrelid = rel::regclass;
        relation := rel::regclass;
        distribution := kind;
        RETURN NEXT;
    END LOOP;
END
$fn$;

-- A whole-list write replaces only what a read of the list shows; a cut read says so in the
-- data (issue 52, part 1): the task files' functions say it (their comments above).
COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: taskmaster, beads, backlog, claude-todos, claude-tasks; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; a task whose todo no read of the list shows (past todo.max_read_todos or todo.max_output_size) is kept as it is, counted in "kept"; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';
