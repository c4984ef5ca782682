-- pg_todos 1.1.1 -> 1.2.0: the core at the speed of hand-written SQL (issue 54).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.2.0'" to load this file. \quit

-- The open todos of each list in position order: every read of open todos (the open block, the
-- preamble, the writ's list, the dialects' reads) probes it once for the list and once for the
-- pool, where it probed todos_conversation_list once per open status for each (ten probes).
-- Built here in one pass over todo.todos (writes to it wait meanwhile: on 1 M rows, about
-- two seconds on the machine of bench/results.md).
-- Through EXECUTE, IF NOT EXISTS: on a store distributed with Citus, Citus sends a CREATE INDEX
-- to the workers as its statement's text, which in an extension script is the whole script
-- (refused: "cannot insert multiple commands into a prepared statement"); and a worker that
-- has run this script already has the index.
DO $index$
BEGIN
    EXECUTE $sql$CREATE INDEX IF NOT EXISTS todos_open ON todo.todos (tenant_id, conversation_id, position, id)
        WHERE status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review')$sql$;
    EXECUTE $sql$COMMENT ON INDEX todo.todos_open IS 'The open todos (pending, in progress, blocked, deferred, review) of each list in position order: what the reads of open todos scan.'$sql$;
END
$index$;

-- Batch claims: up to quantity ready todos claimed in one statement, and several finished at
-- once, all or nothing
CREATE FUNCTION todo."claim_batch"(
	"quantity" INT,
	"lease_seconds" INT DEFAULT NULL
) RETURNS TABLE (
	"id" bigint,
	"subject" TEXT,
	"fence" bigint,
	"lease_expires_at" timestamp with time zone
)
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'claim_batch_wrapper';
CREATE FUNCTION todo."finish_batch"(
	"todo_ids" bigint[],
	"fences" bigint[] DEFAULT NULL,
	"status" TEXT DEFAULT 'completed',
	"outcome" TEXT DEFAULT NULL
) RETURNS bigint
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'finish_batch_wrapper';
REVOKE EXECUTE ON FUNCTION todo.claim_batch(integer, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION todo.finish_batch(bigint[], bigint[], text, text) FROM PUBLIC;
COMMENT ON FUNCTION todo.claim_batch(integer, integer) IS
    'Claims up to quantity ready todos at once for the agent in context, in claim order, each with the same lease: (id, subject, fence, lease_expires_at) for each; fewer rows when fewer are ready. Concurrent batches never share a todo. Errors: 22004 a NULL quantity; 22023 no tenant or no agent in context, a lease out of range, or a quantity below 1 or over todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.finish_batch(bigint[], bigint[], text, text) IS
    'Completes or cancels several todos at once, each as todo.finish would (fences[k]: the claim todo_ids[k] must be under; NULL: none); all or nothing: the first refusal is the error and none is finished. Returns how many it finished. Errors: 22004 a NULL todo_ids, id or status; 22023 no tenant in context, a status other than completed or canceled, a todo named twice, more fences than todos, or more todos than todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 a todo not in scope; 55006 another agent holds one; 55000 a stale claim, or one finished already (each message names its todo).';

-- Waiting claims as MCP tasks (issue 55, item 4): a claim that keeps trying until its
-- deadline, stored before its maker is answered and tried again by each look at it.
-- Waiting claims (src/store/waits.rs): a claim of the next ready todo (or of one todo) that
-- keeps trying for up to its wait, which MCP answers as a task (the Tasks extension): made by
-- todo.claim_wait before the reply, tried again by each todo.claim_wait_get (so a service
-- restart loses nothing and no worker is needed), ended by a claim, the deadline or
-- todo.claim_wait_cancel. Kept an hour after it ends (todo.claim_wait removes older ones of
-- its tenant). Written only by the extension.
CREATE TABLE todo.claim_waits (
    tenant_id       text NOT NULL,
    wait_id         uuid NOT NULL,
    conversation_id text,
    agent           text NOT NULL,
    arguments       jsonb NOT NULL CONSTRAINT claim_waits_arguments_check CHECK (jsonb_typeof(arguments) = 'object'),
    status          text NOT NULL CONSTRAINT claim_waits_status_check CHECK (status IN ('working', 'completed', 'cancelled')),
    result          jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    deadline        timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, wait_id),
    CONSTRAINT claim_waits_result_check CHECK ((status = 'completed') = (result IS NOT NULL))
);
CREATE INDEX claim_waits_agent ON todo.claim_waits (tenant_id, agent) WHERE status = 'working';
CREATE INDEX claim_waits_ended ON todo.claim_waits (tenant_id, updated_at);
COMMENT ON TABLE todo.claim_waits IS 'Waiting claims: a claim that keeps trying until its deadline (MCP''s tasks), by todo.claim_wait, todo.claim_wait_get and todo.claim_wait_cancel; written by the extension.';
COMMENT ON COLUMN todo.claim_waits.tenant_id IS 'The tenant it claims in.';
COMMENT ON COLUMN todo.claim_waits.wait_id IS 'Its id (random): MCP''s taskId.';
COMMENT ON COLUMN todo.claim_waits.conversation_id IS 'The list it claims from (NULL: the tenant-wide pool).';
COMMENT ON COLUMN todo.claim_waits.agent IS 'The agent it claims for: the one in context when it was made.';
COMMENT ON COLUMN todo.claim_waits.arguments IS 'The claim''s arguments (coord''s claim_todo: id, lease_seconds, wait_seconds).';
COMMENT ON COLUMN todo.claim_waits.status IS 'working (still trying), completed (claimed, refused, or the deadline passed: result says which) or cancelled.';
COMMENT ON COLUMN todo.claim_waits.result IS 'Once completed: the claim''s answer as MCP''s CallToolResult (todo.call_mcp''s).';
COMMENT ON COLUMN todo.claim_waits.created_at IS 'When it was made.';
COMMENT ON COLUMN todo.claim_waits.updated_at IS 'When its status last changed.';
COMMENT ON COLUMN todo.claim_waits.deadline IS 'When it stops trying: made plus its wait.';
COMMENT ON INDEX todo.claim_waits_agent IS 'The waits still trying of each agent: what the limit of todo.claim_wait counts.';
COMMENT ON INDEX todo.claim_waits_ended IS 'The waits of a tenant by their last change: what todo.claim_wait removes once an hour old.';

-- its key to todo.tenants: now on one server; on a distributed store todo.distribute(), the
-- step after the update, distributes the table and then adds the key (as for todo.caller_numbers)
DO $do$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        ALTER TABLE todo.claim_waits ADD CONSTRAINT claim_waits_tenant_id_fkey
            FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
    END IF;
END
$do$;
REVOKE ALL ON todo.claim_waits FROM PUBLIC;
ALTER TABLE todo.claim_waits ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.claim_waits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.claim_waits
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.claim_waits', '');
CREATE FUNCTION todo.claim_wait(args jsonb) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_wrapper';
COMMENT ON FUNCTION todo.claim_wait(jsonb) IS
    'Starts a waiting claim for the agent in context: args are coord''s claim_todo arguments (id, lease_seconds) with wait_seconds (1 to 3600). Tries the claim now and stores the wait (todo.claim_waits), completed when the try claimed a todo or was refused for good, else working until the deadline; answers it as an MCP task (taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, result once completed). Errors: 22004 NULL args; 22023 no tenant or agent in context, wait_seconds missing or out of range; 54000 the agent has 100 waits working, or args over todo.max_arguments_size; 42704 tenant not registered.';
CREATE FUNCTION todo.claim_wait_get(task_id text) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_get_wrapper';
COMMENT ON FUNCTION todo.claim_wait_get(text) IS
    'The waiting claim task_id of the tenant in context as an MCP task; while it is working the claim is tried again (as the agent that started it, on its list), and it completes with that answer when a todo was claimed, the claim was refused for good, or the deadline passed. Errors: 22004 a NULL task_id; P0002 no such wait in this tenant (ended waits are kept an hour); 22023 no tenant in context.';
CREATE FUNCTION todo.claim_wait_cancel(task_id text) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_cancel_wrapper';
COMMENT ON FUNCTION todo.claim_wait_cancel(text) IS
    'Cancels the waiting claim task_id of the tenant in context when it is still working (one that ended stays as it is); the task. Errors: 22004 a NULL task_id; P0002 no such wait in this tenant; 22023 no tenant in context.';
REVOKE EXECUTE ON FUNCTION todo.claim_wait(jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION todo.claim_wait_get(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION todo.claim_wait_cancel(text) FROM PUBLIC;

-- Which lists changed since a cursor, without their todos (what MCP's resource subscriptions follow)
CREATE FUNCTION todo.changed_lists(since text, after text DEFAULT NULL, page_size integer DEFAULT 1000) RETURNS jsonb
LANGUAGE c STABLE PARALLEL RESTRICTED SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'changed_lists_wrapper';
COMMENT ON FUNCTION todo.changed_lists(text, text, integer) IS
    'The lists changed since a cursor, without their todos: {"cursor", "lists": [id, or null for the tenant-wide pool], "next"}, a page at a time as changes_since(since, after, page_size) (page_size 1 to 1000, default 1000). Errors: 22023 no tenant in context, or a page_size not from 1 to 1000; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor.';
REVOKE EXECUTE ON FUNCTION todo.changed_lists(text, text, integer) FROM PUBLIC;

-- todo.distribute() distributes todo.claim_waits too (and gives it its key to todo.tenants)
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
    colocated constant text[] := ARRAY['todo.todos', 'todo.counters', 'todo.id_ranges', 'todo.events', 'todo.dependencies', 'todo.checklist_items', 'todo.comments', 'todo.locks', 'todo.caller_numbers', 'todo.claim_waits'];
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

    -- a store updated to 1.2.0 while distributed has todo.claim_waits without its key to todo.tenants
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'claim_waits_tenant_id_fkey' AND conrelid = 'todo.claim_waits'::regclass) THEN
        ALTER TABLE todo.claim_waits ADD CONSTRAINT claim_waits_tenant_id_fkey
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
COMMENT ON FUNCTION todo.distribute() IS
    'Spreads the store over Citus workers by tenant (run once, on the coordinator, as the tables'' owner; idempotent). Returns each table and how it is distributed. Errors: 55000 Citus not installed, not the coordinator, or a worker without this version of pg_todos; 42501 a role that does not own the tables.';

-- the new functions, to every role todo.grant_usage granted
DO $grant$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM todo.roles LOOP
        PERFORM todo.grant_usage(r.role, r.tenant_id, r.plain_sql);
    END LOOP;
END
$grant$;
