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
COMMENT ON FUNCTION todo.board_act(jsonb) IS
    'One change a person makes on the board, for the tenant and agent in context (pg_todos serve sets person:<label>): {"op": add | edit | move | status | reorder | block | unblock | release | create_list | archive | unarchive | comment | check | add_item | bulk, ...its fields}; edit (labels and due_at too), move (to another list or under another parent) and status take the version the person read and refuse a todo changed since; bulk does up to 200 of them on as many todos, all or none. Returns {"status": <http status>, "body": {"todo", ...} or {"error", "current"?}} as todo.rest does: 400 a bad action, 404 no such todo, 409 the lifecycle, a claim, a cycle or a stale version, 422 a value over its limit. Errors: 22023 no tenant in context, 22004 a NULL action.';
COMMENT ON FUNCTION todo.board_todo(bigint) IS
    'One todo of the tenant in context as the board''s detail panel shows it (archived too): {"status": 200, "body": {"todo", "subtasks", "blocked_by", "blocks" (at most 200 each), "history" (its newest 100 events: who did what, when), "comments" (its newest 100), "checklists" ({"acceptance", "done"}: each item''s position, text and checked), and the *_omitted counts}}, or {"status": 404}. Errors: 22023 no tenant in context, 22004 a NULL id.';
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

-- The board reads a list a page at a time (todo.board's per_list and each list's next,
-- todo.board_page) and applies what changed since it read (todo.board's cursor,
-- todo.board_changes); rows carry their position
DROP FUNCTION todo.board();
CREATE FUNCTION todo.board(per_list integer DEFAULT 200) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
-- PL/pgSQL with the tenant in a variable: each statement names one tenant, so Citus sends it
-- to the tenant's worker. Bounded, however large the tenant: at most max_conversations
-- conversations, per_list todos of each (each with at most max_blockers of the open todos
-- it waits for) and max_attention attention rows are built, with
-- counts of what was left out; the conversations are chosen from one aggregate over the
-- tenant's live todos (no JSON is built for the others). A list with more todos says where
-- its next page starts (todo.board_page's after); the cursor, taken first, is where
-- todo.board_changes starts.
DECLARE
    tenant text := todo.current_tenant();
    max_conversations constant integer := 50;
    max_todos constant integer := 200;
    max_attention constant integer := 200;
    max_blockers constant integer := 50;
    feed_cursor text;
BEGIN
IF per_list IS NULL OR per_list NOT BETWEEN 1 AND max_todos THEN
    RAISE EXCEPTION 'todo.board: per_list must be from 1 to %, not %', max_todos, coalesce(per_list::text, 'NULL')
        USING ERRCODE = '22023', HINT = 'Pass how many todos of each list to read; todo.board_page reads the rest.';
END IF;
feed_cursor := todo.changed_lists(NULL)->>'cursor';
RETURN (WITH groups AS (
    SELECT t.conversation_id, max(t.updated_at) AS active, count(*) AS total
      FROM todo.todos t
     WHERE t.tenant_id = tenant AND t.archived_at IS NULL
     GROUP BY t.conversation_id
    UNION ALL
    -- lists made on the board (todo.board_act's create_list) that hold no todo yet
    SELECT substr(l.name, 6), (l.properties->'board'->>'at')::timestamptz, 0
      FROM todo.locks l
     WHERE l.tenant_id = tenant AND starts_with(l.name, 'list:') AND l.properties ? 'board'
       AND NOT EXISTS (SELECT 1 FROM todo.todos e
                        WHERE e.tenant_id = tenant AND e.conversation_id = substr(l.name, 6) AND e.archived_at IS NULL)
), chosen AS (
    SELECT g.conversation_id, g.active, g.total, count(*) OVER () AS all_groups,
           row_number() OVER (ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id) AS rank
      FROM groups g
     ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id
     LIMIT max_conversations
), shown AS (
    SELECT c.rank, t.*,
           (SELECT coalesce(jsonb_agg(o.depends_on ORDER BY o.depends_on), '[]')
              FROM (SELECT d.depends_on FROM todo.dependencies d
                      JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                     WHERE d.tenant_id = tenant AND d.todo_id = t.id
                       AND b.status NOT IN ('completed', 'canceled')
                     ORDER BY d.depends_on LIMIT max_blockers) o) AS blocked_by,
           (SELECT jsonb_build_object('done', count(*) FILTER (WHERE s.status = 'completed'), 'total', count(*))
              FROM todo.todos s
             WHERE s.tenant_id = tenant AND s.parent_id = t.id
               AND s.status <> 'canceled' AND s.archived_at IS NULL
            HAVING count(*) > 0) AS subtasks,
           -- who changed it last: its newest event's agent (one probe of the events' key)
           (SELECT e.agent_id FROM todo.events e
             WHERE e.tenant_id = tenant AND e.todo_id = t.id
             ORDER BY e.version DESC LIMIT 1) AS updated_by
      FROM chosen c
      CROSS JOIN LATERAL (
          SELECT x.* FROM todo.todos x
           WHERE x.tenant_id = tenant AND x.archived_at IS NULL
             AND (x.conversation_id = c.conversation_id OR (c.conversation_id IS NULL AND x.conversation_id IS NULL))
           ORDER BY x.position, x.id
           LIMIT per_list) t
), lists AS (
    SELECT rank,
           jsonb_agg(jsonb_build_object(
               'id', id, 'subject', subject, 'active_form', active_form, 'status', status,
               'priority', priority, 'owner', owner, 'agent_id', agent_id, 'claimed_by', claimed_by,
               'lease_expires_at', lease_expires_at,
               'lease_seconds_left', CASE WHEN claimed_by IS NOT NULL
                   THEN greatest(0, ceil(extract(epoch FROM lease_expires_at - now())))::bigint END,
               'fence', fence, 'version', version,
               'blocked_by', blocked_by, 'parent_id', parent_id, 'subtasks', subtasks,
               'updated_at', updated_at, 'updated_by', updated_by, 'position', position,
               'labels', labels, 'due_at', due_at)
               ORDER BY position, id) AS todos,
           count(*) AS n,
           (array_agg(position::text || ':' || id ORDER BY position DESC, id DESC))[1] AS last
      FROM shown
     GROUP BY rank
), attention AS (
    SELECT a.*, count(*) OVER () AS all_rows FROM todo.needs_attention a
     WHERE a.tenant_id = tenant
     ORDER BY a.since, a.todo_id
     LIMIT max_attention
)
SELECT jsonb_build_object(
    'tenant', tenant,
    'now', now(),
    'cursor', feed_cursor,
    'conversations', coalesce((SELECT jsonb_agg(jsonb_build_object('conversation_id', c.conversation_id,
                                                                   'todos', coalesce(l.todos, '[]'),
                                                                   'todos_omitted', c.total - coalesce(l.n, 0),
                                                                   'next', CASE WHEN c.total > coalesce(l.n, 0) THEN l.last END)
                                                ORDER BY c.rank)
                                 FROM chosen c LEFT JOIN lists l ON l.rank = c.rank), '[]'),
    'conversations_omitted', coalesce((SELECT max(c.all_groups) - count(*) FROM chosen c), 0),
    'attention', coalesce((SELECT jsonb_agg(to_jsonb(a) - 'tenant_id' - 'all_rows' ORDER BY a.since, a.todo_id)
                             FROM attention a), '[]'),
    'attention_omitted', coalesce((SELECT max(a.all_rows) - count(*) FROM attention a), 0),
    'limits', jsonb_build_object('conversations', max_conversations, 'todos', per_list,
                                 'attention', max_attention, 'blocked_by', max_blockers)));
END
$fn$;
COMMENT ON FUNCTION todo.board(integer) IS
    'The board of the tenant in context, bounded: {"tenant", "now", "cursor" (where todo.board_changes starts), "conversations": [{"conversation_id", "todos" (each with its version, fence, position, and who changed it last, "updated_by"), "todos_omitted", "next" (where todo.board_page reads on, null when nothing was left out)}] (the tenant-wide pool first, then the most recently active, a list made on the board with no todo yet among them; at most 50 conversations of at most per_list (1 to 200, default 200) todos each, in list order, each todo with at most 50 of the open todos it is blocked by), "conversations_omitted", "attention": the needs_attention rows (at most 200, the oldest first), "attention_omitted", "limits": {"conversations": 50, "todos": per_list, "attention": 200, "blocked_by": 50}}; the *_omitted counts say what was left out. Errors: 22023 when no tenant is in context, or per_list is not from 1 to 200.';
REVOKE EXECUTE ON FUNCTION todo.board(integer) FROM PUBLIC;
CREATE FUNCTION todo.board_page(list text, after text DEFAULT NULL, page_size integer DEFAULT 100) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_page_wrapper';
COMMENT ON FUNCTION todo.board_page(text, text, integer) IS
    'The next page of a list on the board, for the tenant in context (list NULL: the tenant-wide pool): its todos that are not archived, in list order, after the place after (the "next" of todo.board()''s list or of the page before; NULL: from the start), at most page_size (1 to 200), each as todo.board() shows it with its position. Returns {"status": 200, "body": {"list", "todos", "next": the place after the last, null when none follows}}, or {"status": 400, "body": {"error"}} for a page_size out of range or an after that is not a place. Errors: 22023 no tenant in context; 42704 tenant not registered.';
CREATE FUNCTION todo.board_changes(since text, also bigint[] DEFAULT NULL) RETURNS jsonb
LANGUAGE c STABLE PARALLEL RESTRICTED SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_changes_wrapper';
COMMENT ON FUNCTION todo.board_changes(text, bigint[]) IS
    'What changed on the board of the tenant in context since a cursor (the "cursor" of todo.board() or of the changes before): {"status": 200, "body": {"cursor", "now", "todos": each todo with a change the cursor did not see, and the todos whose rows those changes alter (a parent''s progress, a waiting todo''s blockers), as the board shows them with their list, position and archived_at, at most 200, "reload": true (and no todos) past that, "empty_lists": the lists made on the board that hold no todo yet (at most 50), "attention", "attention_omitted": the needs attention rows now}}; also: todos to read whether they changed or not (at most 200; a lease renewed records no event); since NULL: only the cursor (and also); {"status": 400} for a since that is not a cursor or more than 200 also. Errors: 22023 no tenant in context; 42704 tenant not registered.';
CREATE FUNCTION todo.board_search(filters jsonb) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_search_wrapper';
COMMENT ON FUNCTION todo.board_search(jsonb) IS
    'The todos the board''s filters match, for the tenant in context: filters {"list" (absent: every list; null: the tenant-wide pool), "status", "q" (words of the subject or the description), "who" (part of the claim holder, the assignee, the maker or the last actor), "archived" (true: the archived todos instead)}, each optional, the texts case-insensitive. Returns {"status": 200, "body": {"todos": at most 200 todos that are not archived (archived: only archived ones), as the board shows them, by list (the pool first) and in list order (archived: the newest archived first), "more": whether more match}}, or {"status": 400, "body": {"error"}} for an unknown filter, a value that is not text (archived: not a boolean), a status that is none, or a text over 200 characters. Reads every todo of the tenant. Errors: 22023 no tenant in context; 42704 tenant not registered.';
REVOKE EXECUTE ON FUNCTION todo.board_page(text, text, integer), todo.board_changes(text, bigint[]), todo.board_search(jsonb) FROM PUBLIC;

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
