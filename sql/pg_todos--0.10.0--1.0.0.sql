-- pg_todos 0.10.0 -> 1.0.0: a dialect is one declaration. todo.dialects() lists the tool
-- dialects (name, earlier names, runtime, description, tools, list shape); the comments that
-- named every dialect point to it instead, so a new dialect changes no upgrade script.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.0.0'" to load this file. \quit

CREATE FUNCTION todo."dialects"() RETURNS TABLE (
	"name" TEXT,  /* String */
	"aliases" TEXT[],  /* Vec < String > */
	"runtime" TEXT,  /* String */
	"description" TEXT,  /* String */
	"tools" TEXT[],  /* Vec < String > */
	"list_shape" TEXT  /* Option < String > */
)
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dialects_wrapper';
COMMENT ON FUNCTION todo.dialects() IS
    'Every tool dialect, in catalog order: its name (for pg_todos mcp --tools, /mcp?tools= and todo.call(''dialect/tool'', ...)), earlier names still accepted, the runtime or tracker it speaks for, what its tools do, their names, and the shape todo.list_as reads a list in (NULL: none). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.dialects() FROM PUBLIC;

COMMENT ON FUNCTION todo.tools() IS
    'Every tool of every dialect (todo.dialects() lists them) as MCP tool objects {name, description, inputSchema, _meta: {"pg_todos/dialect"}}, in catalog order. Raises nothing.';
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a dialect''s shape: todo.dialects() lists the dialects that have one (list_shape) and what it is.';

-- The trackers' fields, as columns every dialect can read: labels, the issue type, a due
-- date, notes and the plan. Each command by EXECUTE, alone, IF NOT EXISTS: on a distributed
-- store Citus sends a command to the shards as its statement's text (the whole script, for a
-- command of an extension script), and to workers that have run this script already.
DO $update$
BEGIN
    EXECUTE $$ALTER TABLE todo.todos ADD COLUMN IF NOT EXISTS labels text[]$$;
    EXECUTE $$ALTER TABLE todo.todos ADD COLUMN IF NOT EXISTS issue_type text$$;
    EXECUTE $$ALTER TABLE todo.todos ADD COLUMN IF NOT EXISTS due_at timestamptz$$;
    EXECUTE $$ALTER TABLE todo.todos ADD COLUMN IF NOT EXISTS notes text$$;
    EXECUTE $$ALTER TABLE todo.todos ADD COLUMN IF NOT EXISTS plan text$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.labels IS 'Its labels (beads'', Backlog.md''s), in the order given; NULL: none. At most todo.max_metadata_size bytes.'$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.issue_type IS 'What kind of work it is (beads'' and Backlog.md''s issue type: bug, feature, task, epic, chore, …); NULL: not said.'$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.due_at IS 'When it is due (Backlog.md''s due date); NULL: no date.'$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.notes IS 'Notes kept while working on it (beads'' notes, Backlog.md''s implementation notes).'$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.plan IS 'How it is to be done (beads'' design, Backlog.md''s implementation plan, Task Master''s details).'$$;
    EXECUTE $$ALTER TABLE todo.locks ADD COLUMN IF NOT EXISTS properties jsonb CONSTRAINT locks_properties_check CHECK (jsonb_typeof(properties) = 'object')$$;
    EXECUTE $$COMMENT ON COLUMN todo.locks.properties IS 'On a list row: what dialects keep about the list as a whole (Task Master''s tag: its description and when it was made; on a project''s list, its current tag). NULL: nothing.'$$;
END
$update$;

-- Two more open statuses, deferred and review (Task Master's and beads'): the statuses a
-- dependency waits on are the open ones, so the view and the board name the terminal ones.
COMMENT ON COLUMN todo.todos.status IS 'pending, in_progress, completed, canceled; or blocked (waiting on something outside the list), deferred (put off for later), review (done, waiting for a review): open, never claimed or ready.';
CREATE OR REPLACE VIEW todo.needs_attention WITH (security_invoker = true) AS
SELECT a.tenant_id, a.todo_id, a.conversation_id, a.subject, a.status, a.claimed_by, a.reason, a.since,
       floor(extract(epoch FROM now() - a.since))::bigint AS for_seconds
  FROM (SELECT t.tenant_id, t.id AS todo_id, t.conversation_id, t.subject, t.status, t.claimed_by,
               -- at most one reason per todo; one CASE (not a union per reason), so that on a
               -- distributed store Citus runs the whole view on each worker
               CASE WHEN t.claimed_by IS NOT NULL AND t.lease_expires_at < now() THEN 'lease_lapsed'
                    WHEN t.status = 'in_progress' AND t.claimed_by IS NULL
                         AND t.updated_at < now() - coalesce(current_setting('todo.attention_idle', true), '15min')::interval
                         THEN 'no_heartbeat'
                    WHEN (t.status = 'blocked'
                          OR (t.status = 'pending' AND EXISTS (
                              SELECT 1 FROM todo.dependencies d
                                JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                               WHERE d.tenant_id = t.tenant_id AND d.todo_id = t.id
                                 AND b.status NOT IN ('completed', 'canceled'))))
                         AND t.updated_at < now() - coalesce(current_setting('todo.attention_blocked', true), '1h')::interval
                         THEN 'blocked'
               END AS reason,
               CASE WHEN t.claimed_by IS NOT NULL AND t.lease_expires_at < now() THEN t.lease_expires_at
                    ELSE t.updated_at END AS since
          FROM todo.todos t
         WHERE t.archived_at IS NULL) a
 WHERE a.reason IS NOT NULL;

CREATE OR REPLACE FUNCTION todo.board() RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
-- PL/pgSQL with the tenant in a variable: each statement names one tenant, so Citus sends it
-- to the tenant's worker. Bounded, however large the tenant: at most max_conversations
-- conversations, max_todos todos of each (each with at most max_blockers of the open todos
-- it waits for) and max_attention attention rows are built, with
-- counts of what was left out; the conversations are chosen from one aggregate over the
-- tenant's live todos (no JSON is built for the others).
DECLARE
    tenant text := todo.current_tenant();
    max_conversations constant integer := 50;
    max_todos constant integer := 200;
    max_attention constant integer := 200;
    max_blockers constant integer := 50;
BEGIN
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
           LIMIT max_todos) t
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
               'updated_at', updated_at, 'updated_by', updated_by)
               ORDER BY position, id) AS todos,
           count(*) AS n
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
    'conversations', coalesce((SELECT jsonb_agg(jsonb_build_object('conversation_id', c.conversation_id,
                                                                   'todos', coalesce(l.todos, '[]'),
                                                                   'todos_omitted', c.total - coalesce(l.n, 0))
                                                ORDER BY c.rank)
                                 FROM chosen c LEFT JOIN lists l ON l.rank = c.rank), '[]'),
    'conversations_omitted', coalesce((SELECT max(c.all_groups) - count(*) FROM chosen c), 0),
    'attention', coalesce((SELECT jsonb_agg(to_jsonb(a) - 'tenant_id' - 'all_rows' ORDER BY a.since, a.todo_id)
                             FROM attention a), '[]'),
    'attention_omitted', coalesce((SELECT max(a.all_rows) - count(*) FROM attention a), 0),
    'limits', jsonb_build_object('conversations', max_conversations, 'todos', max_todos,
                                 'attention', max_attention, 'blocked_by', max_blockers)));
END
$fn$;
COMMENT ON FUNCTION todo.board() IS
    'The board of the tenant in context, bounded: {"tenant", "now", "conversations": [{"conversation_id", "todos" (each with its version and fence, and who changed it last, "updated_by"), "todos_omitted"}] (the tenant-wide pool first, then the most recently active, a list made on the board with no todo yet among them; at most 50 conversations of at most 200 todos each, in list order, each todo with at most 50 of the open todos it is blocked by), "conversations_omitted", "attention": the needs_attention rows (at most 200, the oldest first), "attention_omitted", "limits": {"conversations": 50, "todos": 200, "attention": 200, "blocked_by": 50}}; the *_omitted counts say what was left out. Errors: 22023 when no tenant is in context.';

-- The checkable lists and comments of a todo (Backlog.md's acceptance criteria, definition of
-- done and comments), as tables of their own.
-- A todo's checkable lists (Backlog.md's acceptance criteria and definition of done) and its
-- comments with their author: rows of their own, which every dialect and plain SQL read. At
-- most 100 items of each list and 1000 comments a todo (their positions' CHECKs).
CREATE TABLE todo.checklist_items (
    tenant_id  text NOT NULL DEFAULT todo.current_tenant(),
    todo_id    bigint NOT NULL,
    kind       text NOT NULL CONSTRAINT checklist_items_kind_check CHECK (kind IN ('acceptance', 'done')),
    position   integer NOT NULL CONSTRAINT checklist_items_position_check CHECK (position BETWEEN 1 AND 100),
    text       text NOT NULL CONSTRAINT checklist_items_text_check CHECK (btrim(text) <> '' AND octet_length(text) <= 10000),
    checked    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (tenant_id, todo_id, kind, position)
);
COMMENT ON TABLE todo.checklist_items IS 'A todo''s checkable lists: its acceptance criteria and its definition of done (Backlog.md''s), item by item, in order.';

CREATE TABLE todo.comments (
    tenant_id  text NOT NULL DEFAULT todo.current_tenant(),
    todo_id    bigint NOT NULL,
    position   integer NOT NULL CONSTRAINT comments_position_check CHECK (position BETWEEN 1 AND 1000),
    author     text CONSTRAINT comments_author_check CHECK (octet_length(author) <= 200),
    body       text NOT NULL CONSTRAINT comments_body_check CHECK (btrim(body) <> '' AND octet_length(body) <= 10000),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, todo_id, position)
);
COMMENT ON TABLE todo.comments IS 'Comments on a todo, with their author, in the order they were written (Backlog.md''s).';
-- Their keys to todo.todos: now on one server. On a distributed store Citus cannot keep a
-- local table referencing a distributed one: todo.distribute(), the step after the update,
-- distributes them and then adds the keys.
DO $do$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        ALTER TABLE todo.checklist_items ADD CONSTRAINT checklist_items_todo_fkey FOREIGN KEY (tenant_id, todo_id)
            REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
        ALTER TABLE todo.comments ADD CONSTRAINT comments_todo_fkey FOREIGN KEY (tenant_id, todo_id)
            REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
    ELSE
        EXECUTE $sql$
            DO $inner$
            BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'todo.todos'::regclass) THEN
                    ALTER TABLE todo.checklist_items ADD CONSTRAINT checklist_items_todo_fkey FOREIGN KEY (tenant_id, todo_id)
                        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
                    ALTER TABLE todo.comments ADD CONSTRAINT comments_todo_fkey FOREIGN KEY (tenant_id, todo_id)
                        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE;
                END IF;
            END
            $inner$
        $sql$;
    END IF;
END
$do$;
-- todo.checklist_items, todo.comments
COMMENT ON COLUMN todo.checklist_items.tenant_id IS 'The tenant of the todo (by default the one in context).';
COMMENT ON COLUMN todo.checklist_items.todo_id IS 'The todo the item is on.';
COMMENT ON COLUMN todo.checklist_items.kind IS 'Which list: acceptance (its acceptance criteria) or done (its definition of done).';
COMMENT ON COLUMN todo.checklist_items.position IS 'Its place in its list, from 1 (Backlog.md''s #1, #2, …); at most 100.';
COMMENT ON COLUMN todo.checklist_items.text IS 'What is to be true.';
COMMENT ON COLUMN todo.checklist_items.checked IS 'Whether it is checked off.';
COMMENT ON COLUMN todo.comments.tenant_id IS 'The tenant of the todo (by default the one in context).';
COMMENT ON COLUMN todo.comments.todo_id IS 'The todo commented on.';
COMMENT ON COLUMN todo.comments.position IS 'Its place among the todo''s comments, from 1, in the order written; at most 1000.';
COMMENT ON COLUMN todo.comments.author IS 'Who wrote it (Backlog.md''s commentAuthor); NULL: not said.';
COMMENT ON COLUMN todo.comments.body IS 'What it says.';
COMMENT ON COLUMN todo.comments.created_at IS 'When it was written.';
REVOKE ALL ON todo.checklist_items, todo.comments FROM PUBLIC;
ALTER TABLE todo.checklist_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.comments ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.checklist_items FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.comments FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.checklist_items
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.comments
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.checklist_items', '');
SELECT pg_catalog.pg_extension_config_dump('todo.comments', '');

-- An app's role gets plain SQL on them too; todo.distribute() colocates them with todo.todos.
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
                   'todo.checklist_items, todo.comments, todo.locks, todo.roles, todo.tokens, todo.needs_attention FROM %s', grant_usage.role);
    IF grant_usage.plain_sql THEN
        EXECUTE format('GRANT SELECT ON todo.tenants TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.todos TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT ON todo.events TO %s', grant_usage.role);
        -- read-only, for todo.verify() (which checks the ids against them)
        EXECUTE format('GRANT SELECT ON todo.counters, todo.id_ranges TO %s', grant_usage.role);
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
    'Grants a role the use of pg_todos. tenant: the one tenant it may ever act for (NULL: any, for a service such as pg_todos serve). plain_sql: true for an app (plain SQL on todo.todos, todo.dependencies, todo.checklist_items and todo.comments, reads of its history), false for an agent (the functions only). Idempotent; never changes a role''s tenant. Errors: 42704 unknown tenant, 55000 granted already with another tenant, 22023 a role that bypasses row-level security bound to a tenant.';
CREATE OR REPLACE FUNCTION todo.revoke_usage(role regrole) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    EXECUTE format('REVOKE ALL ON todo.tenants, todo.counters, todo.id_ranges, todo.todos, todo.events, todo.dependencies, '
                   'todo.checklist_items, todo.comments, todo.locks, todo.roles, todo.tokens, todo.needs_attention FROM %s', revoke_usage.role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA todo FROM %s', revoke_usage.role);
    DELETE FROM todo.roles r WHERE r.role = revoke_usage.role;
    RETURN FOUND;
END
$fn$;
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
    colocated constant text[] := ARRAY['todo.todos', 'todo.counters', 'todo.id_ranges', 'todo.events', 'todo.dependencies', 'todo.checklist_items', 'todo.comments', 'todo.locks'];
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

-- The trackers' files: todo.import and todo.export.
CREATE FUNCTION todo."export"(
	"format" TEXT, /* Option < & str > */
	"conversation" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"path" TEXT,  /* String */
	"content" TEXT  /* String */
)
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'export_wrapper';
CREATE FUNCTION todo."import"(
	"format" TEXT, /* Option < & str > */
	"files" jsonb, /* Option < JsonB > */
	"conversation" TEXT DEFAULT NULL, /* Option < & str > */
	"dry_run" bool DEFAULT false /* Option < bool > */
) RETURNS jsonb /* Jsonb */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'import_wrapper';
COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: taskmaster, beads, backlog, claude-todos, claude-tasks; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';
COMMENT ON FUNCTION todo.export(text, text) IS
    'Exports a list (conversation; NULL: the context''s) as a tracker''s files (format: taskmaster, beads, backlog, claude-todos, claude-tasks): each file''s path, as the tracker keeps it, and its text, which the tracker reads back. Errors: 22023 unknown format or no list.';
REVOKE EXECUTE ON FUNCTION todo.import(text, jsonb, text, boolean), todo.export(text, text) FROM PUBLIC;

-- The board's changes and its detail read (src/surfaces/board.rs).
CREATE FUNCTION todo."board_act"(
	"action" jsonb /* Option < JsonB > */
) RETURNS jsonb /* Jsonb */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'board_act_wrapper';
CREATE FUNCTION todo."board_todo"(
	"id" bigint /* Option < i64 > */
) RETURNS jsonb /* Jsonb */
STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'board_todo_wrapper';
COMMENT ON FUNCTION todo.board_act(jsonb) IS
    'One change a person makes on the board, for the tenant and agent in context (pg_todos serve sets person:<label>): {"op": add | edit | status | reorder | block | unblock | release | create_list | archive | unarchive, ...its fields}; edit and status take the version the person read and refuse a todo changed since. Returns {"status": <http status>, "body": {"todo", ...} or {"error", "current"?}} as todo.rest does: 400 a bad action, 404 no such todo, 409 the lifecycle, a claim, a cycle or a stale version, 422 a value over its limit. Errors: 22023 no tenant in context, 22004 a NULL action.';
COMMENT ON FUNCTION todo.board_todo(bigint) IS
    'One todo of the tenant in context as the board''s detail panel shows it (archived too): {"status": 200, "body": {"todo", "subtasks", "blocked_by", "blocks" (at most 200 each), "history" (its newest 100 events: who did what, when), and the *_omitted counts}}, or {"status": 404}. Errors: 22023 no tenant in context, 22004 a NULL id.';
REVOKE EXECUTE ON FUNCTION todo.board_act(jsonb), todo.board_todo(bigint) FROM PUBLIC;

-- Per tenant, what an operator watches: todos by status, claims and lapsed leases, the open
-- todo unchanged the longest, and the events of the last hour. It runs as its caller, so
-- row-level security decides what it sees: an administrator (a superuser, BYPASSRLS) every
-- tenant, an app's role its own (the tenant in context), a role that may not read the
-- tables 42501. PL/pgSQL, a tenant at a time: each statement names one tenant (so Citus sends
-- it to the tenant's worker) and reads an index, never the tenant's whole history: the counts
-- by status read todos_tenant_browse (an index-only scan when the table is vacuumed), the
-- claims todos_claims, the oldest open todo one entry of todos_tenant_browse per open status,
-- and the events of the hour events_tenant_xact: the first transaction of the hour is found
-- by bisecting the tenant's transaction ids (about 40 probes at most), then the events from
-- it are counted, at most max_events of them.
CREATE FUNCTION todo.stats(tenant text DEFAULT NULL) RETURNS TABLE (
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
BEGIN
    IF NOT (has_table_privilege('todo.tenants', 'SELECT') AND has_table_privilege('todo.todos', 'SELECT')
            AND has_table_privilege('todo.events', 'SELECT')) THEN
        RAISE EXCEPTION 'todo.stats: role % may not read todo.tenants, todo.todos and todo.events', current_user
            USING ERRCODE = '42501',
                  HINT = 'call it as an administrator (every tenant) or as an app''s role, todo.grant_usage(role, tenant, plain_sql => true) (its tenant)';
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
COMMENT ON FUNCTION todo.stats(text) IS
    'One row per tenant (the one named, or every tenant the caller may read: row-level security decides, an administrator sees all, an app''s role its own): its todos by status (archived ones too); open_claims, the claimed in-progress todos, and lapsed_leases, those whose lease ran out; the open todo unchanged the longest (oldest_open_id, oldest_open_updated_at; NULL: none open); events_last_hour, the changes logged in the last hour, counted from the first transaction found to have written in it (at most 100000: that many or more). Each figure reads an index, never the whole history. Errors: 42501 a role that may not read todo.todos and todo.events (an agent''s); 22023 an app''s role with no tenant in context.';
REVOKE EXECUTE ON FUNCTION todo.stats(text) FROM PUBLIC;

-- Bearer tokens that expire (todo.tokens.expires_at, todo.create_token(..., expires_in)), and
-- why a token does not authenticate (todo.token_refusal), for the HTTP service's 401 answers.
DO $update$
BEGIN
    EXECUTE $$ALTER TABLE todo.tokens ADD COLUMN IF NOT EXISTS expires_at timestamptz$$;
END
$update$;
COMMENT ON COLUMN todo.tokens.expires_at IS 'When it stops authenticating (todo.create_token(..., expires_in => ...)); NULL: never.';
DROP FUNCTION todo.create_token(text, text, boolean, text);
CREATE FUNCTION todo.create_token(tenant text, label text, person boolean DEFAULT false, default_list text DEFAULT NULL,
                                  expires_in interval DEFAULT NULL)
RETURNS TABLE (token_id uuid, token text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    secret text := 'pgt_' || replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
BEGIN
    IF create_token.label IS NULL OR btrim(create_token.label) = '' THEN
        RAISE EXCEPTION 'todo.create_token: the label must not be blank'
            USING ERRCODE = '22023', HINT = 'Name who or what the token is for, e.g. ''ci-agent'' or ''Ada''.';
    END IF;
    IF create_token.person IS NULL THEN
        RAISE EXCEPTION 'todo.create_token: person must be true or false'
            USING ERRCODE = '22004', HINT = 'person => true for a person (the board), false (the default) for an agent.';
    END IF;
    IF create_token.default_list IS NOT NULL AND btrim(create_token.default_list) = '' THEN
        RAISE EXCEPTION 'todo.create_token: the default list must not be blank'
            USING ERRCODE = '22023', HINT = 'Name a list, e.g. ''project:payments-api'', or pass NULL for none.';
    END IF;
    IF create_token.expires_in IS NOT NULL AND now() + create_token.expires_in <= now() THEN
        RAISE EXCEPTION 'todo.create_token: expires_in must be a positive interval, not %', create_token.expires_in
            USING ERRCODE = '22023', HINT = 'e.g. expires_in => ''90 days'', or NULL (the default) for a token that does not expire.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM todo.tenants t WHERE t.tenant_id = create_token.tenant) THEN
        RAISE EXCEPTION 'todo.create_token: tenant "%" is not registered', create_token.tenant
            USING ERRCODE = '42704', HINT = 'INSERT INTO todo.tenants (tenant_id) VALUES (...) first.';
    END IF;
    INSERT INTO todo.tokens AS k (tenant_id, label, secret_hash, person, default_list, expires_at)
    VALUES (create_token.tenant, create_token.label, sha256(convert_to(secret, 'UTF8')), create_token.person,
            create_token.default_list, now() + create_token.expires_in)
    RETURNING k.token_id INTO create_token.token_id;
    token := secret;
    RETURN NEXT;
END
$fn$;
COMMENT ON FUNCTION todo.create_token(text, text, boolean, text, interval) IS
    'Creates a bearer token of the HTTP service for a tenant; returns its id and its secret, shown only this once (only a hash is stored). person => true: a token for a person (the board), the only kind that may act as person:<label> (X-Actor: person); false (the default): an agent''s. default_list: the list (conversation) its MCP calls work on when the request names none (/mcp?list=). expires_in: how long it authenticates (NULL, the default: until revoked). Errors: 22023 blank label or default list, or an expires_in not above zero; 22004 person NULL; 42704 unknown tenant.';
REVOKE EXECUTE ON FUNCTION todo.create_token(text, text, boolean, text, interval) FROM PUBLIC;

CREATE OR REPLACE FUNCTION todo.authenticate(token text) RETURNS TABLE (tenant_id text, label text, person boolean, default_list text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    SELECT k.tenant_id, k.label, k.person, k.default_list FROM todo.tokens k
     WHERE k.secret_hash = pg_catalog.sha256(pg_catalog.convert_to(authenticate.token, 'UTF8'))
       AND k.revoked_at IS NULL
       AND (k.expires_at IS NULL OR k.expires_at > pg_catalog.now())
$fn$;
COMMENT ON FUNCTION todo.authenticate(text) IS
    'The tenant, label and default list of an active bearer token, and whether it was made for a person; no row for an unknown, malformed, revoked or expired one (todo.token_refusal says which). For the HTTP service (todo.grant_usage grants it). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.authenticate(text) FROM PUBLIC;

-- Why a token does not authenticate, for the service's 401 answer (RFC 6750's
-- error_description): called only after todo.authenticate found no row, so the lookup of
-- every request stays one indexed read. It tells nothing a caller holding the token does not
-- already have a right to know: that token's own state.
CREATE FUNCTION todo.token_refusal(token text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    SELECT CASE WHEN k.secret_hash IS NULL THEN 'unknown'
                WHEN k.revoked_at IS NOT NULL THEN 'revoked'
                WHEN k.expires_at <= pg_catalog.now() THEN 'expired'
           END
      FROM (SELECT 1) one
      LEFT JOIN todo.tokens k
        ON k.secret_hash = pg_catalog.sha256(pg_catalog.convert_to(token_refusal.token, 'UTF8'))
$fn$;
COMMENT ON FUNCTION todo.token_refusal(text) IS
    'Why a bearer token does not authenticate: unknown (no such token: mistyped, cut short, of another database, or its tenant deleted), revoked (todo.revoke_token), expired (its expires_in ran out); NULL when it authenticates. For the HTTP service''s 401 answer (todo.grant_usage grants it). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.token_refusal(text) FROM PUBLIC;

-- The roles granted so far get the new function and tables.
SELECT todo.grant_usage(r.role, r.tenant_id, r.plain_sql) FROM todo.roles r ORDER BY r.role::oid;

-- ============================================================================================
-- A public API that says what is public (docs/sql.md lists it, generated from the catalog).
-- ============================================================================================

-- The trigger functions leave schema todo for the extension's private schema, todo_internal:
-- no role but the owner may use it, and PostgreSQL checks no privilege when a trigger fires.
-- The triggers keep their functions (a trigger names its function by oid), and so do their
-- privileges and comments.
CREATE SCHEMA todo_internal;
COMMENT ON SCHEMA todo_internal IS
    'pg_todos'' private schema: its trigger functions, which are not API (schema todo is). No role but the extension''s owner may use it.';
REVOKE ALL ON SCHEMA todo_internal FROM PUBLIC;
ALTER FUNCTION todo.todos_before_write() SET SCHEMA todo_internal;
ALTER FUNCTION todo.todos_log_event() SET SCHEMA todo_internal;
ALTER FUNCTION todo.tenants_changed() SET SCHEMA todo_internal;
ALTER FUNCTION todo.roles_changed() SET SCHEMA todo_internal;
ALTER FUNCTION todo.dependencies_before_insert() SET SCHEMA todo_internal;

-- The text twins of todo.call, todo.call_mcp and todo.rest are gone (a breaking change, in
-- CHANGELOG.md): pass jsonb, casting text with ::jsonb.
DROP FUNCTION todo.call_json(text, text);
DROP FUNCTION todo.call_mcp_json(text, text);
DROP FUNCTION todo.rest_json(text, text, text);

-- A function's Rust name is its SQL name, and so is its C symbol (<name>_wrapper); the
-- library keeps the old symbols for databases not yet updated.
CREATE OR REPLACE FUNCTION todo."claim"(
	"todo_id" bigint DEFAULT NULL, /* Option < i64 > */
	"lease_seconds" INT DEFAULT NULL /* Option < i32 > */
) RETURNS TABLE (
	"id" bigint,  /* i64 */
	"subject" TEXT,  /* String */
	"fence" bigint,  /* i64 */
	"lease_expires_at" timestamp with time zone  /* TimestampWithTimeZone */
)
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'claim_wrapper';

CREATE OR REPLACE FUNCTION todo."heartbeat"(
	"todo_id" bigint, /* Option < i64 > */
	"fence" bigint DEFAULT NULL, /* Option < i64 > */
	"lease_seconds" INT DEFAULT NULL /* Option < i32 > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'heartbeat_wrapper';

CREATE OR REPLACE FUNCTION todo."release"(
	"todo_id" bigint, /* Option < i64 > */
	"fence" bigint DEFAULT NULL /* Option < i64 > */
) RETURNS void
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'release_wrapper';

CREATE OR REPLACE FUNCTION todo."finish"(
	"todo_id" bigint, /* Option < i64 > */
	"fence" bigint DEFAULT NULL, /* Option < i64 > */
	"status" TEXT DEFAULT 'completed', /* Option < & str > */
	"outcome" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS void
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'finish_wrapper';

CREATE OR REPLACE FUNCTION todo."block"(
	"todo_id" bigint, /* i64 */
	"on_id" bigint /* i64 */
) RETURNS bool /* bool */
STRICT VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'block_wrapper';

CREATE OR REPLACE FUNCTION todo."unblock"(
	"todo_id" bigint, /* i64 */
	"on_id" bigint /* i64 */
) RETURNS bool /* bool */
STRICT VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'unblock_wrapper';

CREATE OR REPLACE FUNCTION todo."ready"(
	"max_rows" INT DEFAULT 50 /* i32 */
) RETURNS TABLE (
	"id" bigint,  /* i64 */
	"subject" TEXT,  /* String */
	"status" TEXT,  /* String */
	"tenant_wide" bool  /* bool */
)
STRICT STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ready_wrapper';
CREATE OR REPLACE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_wrapper';

CREATE OR REPLACE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_mcp_wrapper';

CREATE OR REPLACE FUNCTION todo.rest(method text, path text, body jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'rest_wrapper';

-- todo.revoke_usage(NULL) is 22004, not the syntax error of the REVOKE it built.
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
                   'todo.checklist_items, todo.comments, todo.locks, todo.roles, todo.tokens, todo.needs_attention FROM %s', revoke_usage.role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA todo FROM %s', revoke_usage.role);
    DELETE FROM todo.roles r WHERE r.role = revoke_usage.role;
    RETURN FOUND;
END
$fn$;

-- Every public function's comment says what it raises ("Errors: <SQLSTATE> …" or "Raises
-- nothing."): docs/sql.md's errors column.
COMMENT ON FUNCTION todo.claim(bigint, integer) IS
    'Claims a todo (or the next ready one) for the agent in context, with a lease: (id, subject, fence, lease_expires_at); no row when nothing is ready. Errors: 22023 no tenant or no agent in context, or a lease out of range; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds a live claim on it; 55000 it is finished or blocked by open todos.';
COMMENT ON FUNCTION todo.heartbeat(bigint, bigint, integer) IS
    'Renews the lease of a todo the agent in context holds; returns when it now ends. Errors: 22004 a NULL todo_id; 22023 no tenant or no agent in context, or a lease out of range; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or is not the agent''s.';
COMMENT ON FUNCTION todo.release(bigint, bigint) IS
    'Gives back a todo the agent in context holds: pending and unclaimed again. Errors: 22004 a NULL todo_id; 22023 no tenant or no agent in context; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or is not the agent''s.';
COMMENT ON FUNCTION todo.finish(bigint, bigint, text, text) IS
    'Completes or cancels a todo; refused under another agent''s live claim or a stale fence. Errors: 22004 a NULL todo_id or status; 22023 no tenant or no agent in context, or a status other than completed or canceled; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 a stale claim, or it is finished already.';
COMMENT ON FUNCTION todo.block(bigint, bigint) IS
    'Makes the first todo wait for the second while it is open; false when it waited already. Errors: 22023 no tenant in context, a todo waiting for itself, or an edge that would close a cycle (the message shows the path); 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope; 0A000 in a REPEATABLE READ transaction.';
COMMENT ON FUNCTION todo.unblock(bigint, bigint) IS
    'Removes the wait of the first todo for the second; false when there was none. Errors: 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope.';
COMMENT ON FUNCTION todo.ready(integer) IS
    'The ready queue: open, unclaimed, unblocked todos in scope without open subtasks, in claim order, at most max_rows. Errors: 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.call(text, jsonb) IS
    'Runs one tool of todo.tools() by name with its input object and returns its output object; a refusal (an unknown tool, arguments that break its schema or pass todo.max_arguments_size, a value the database refuses) is an error object, and nothing is written. Errors: 22004 a NULL tool; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
COMMENT ON FUNCTION todo.call_mcp(text, jsonb) IS
    'Runs one tool of todo.tools() like todo.call and returns an MCP CallToolResult: the text its runtime shows the model, the output object as structured content, and isError. Errors: 22004 a NULL tool; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
COMMENT ON FUNCTION todo.rest(text, text, jsonb) IS
    'Answers one /v1/todos request (seed 000) as {"status": <http status>, "body": <json>}; a refusal is a 4xx answer (400, 404, 405, 409, 413, 422), and nothing is written. Errors: 22004 a NULL method or path; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a dialect''s shape: todo.dialects() lists the dialects that have one (list_shape) and what it is. Errors: 22023 a dialect with no list shape or none of that name, or no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.changes_since(text) IS
    'The conversations changed since a cursor, each with its whole list as OpenCode todos, and the new cursor: {"cursor", "changes": [{"conversation_id", "todos"}]} (the HTTP service''s todo.updated events). Errors: 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor; 54000 the changed lists pass todo.max_output_size bytes of JSON together (read them a page at a time: the three-argument form).';
COMMENT ON FUNCTION todo.changes_since(text, text, integer) IS
    'changes_since a page at a time: {"cursor", "changes", "next"}; at most page_size (1 to 1000) conversations, fewer once their lists pass 256 KiB of JSON, ordered by id (bytewise) with the tenant-wide pool last; next: the after of the next page, null on the last. Keep the cursor of a catch-up''s first page. Errors: 22023 no tenant in context, or a page_size not from 1 to 1000; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor.';
COMMENT ON FUNCTION todo.current_conversation() IS
    'The conversation in context (todo.conversation), or NULL: tenant-wide. Raises nothing.';
COMMENT ON FUNCTION todo.current_agent() IS
    'The agent in context (todo.agent), or NULL. Raises nothing.';
COMMENT ON FUNCTION todo.current_turn() IS
    'The turn in context (todo.turn), or NULL. Raises nothing.';
COMMENT ON FUNCTION todo.todo_open_block(text) IS
    'The open todos of a conversation plus the tenant-wide pool, as a sub-agent''s delegation block ("Open todos (mark progress as you go — …):"); '''' when nothing is open. Best effort: a failed probe (no tenant, no privileges) is a WARNING and ''''. Errors: only the errors to retry are raised (57014 a cancel or timeout, 40P01 a deadlock, 40001 a serialization failure, 55P03 a lock timeout; docs/errors.md).';
COMMENT ON FUNCTION todo.todo_open_preamble(text) IS
    'The same list framed for the supervisor''s own turn ([OPEN TODOS] … [END OPEN TODOS]); '''' when nothing is open. Best effort, as todo_open_block. Errors: only the errors to retry are raised (57014 a cancel or timeout, 40P01 a deadlock, 40001 a serialization failure, 55P03 a lock timeout; docs/errors.md).';
COMMENT ON FUNCTION todo.preloaded() IS
    'Whether pg_todos is in shared_preload_libraries: only then does every backend refuse, from its first statement, a LOCK of the extension''s tables that would make other tenants wait (docs/security.md). Raises nothing.';
COMMENT ON FUNCTION todo.verify_tenant(text) IS
    'The store''s invariants for one tenant (see todo.verify): one row per violation; NULL: no rows. Errors: 22023 a role under row-level security with no tenant in context.';
COMMENT ON FUNCTION todo.verify() IS
    'The store''s invariants (stamps agree with status, counters and id ranges, event log, claims, no dependency cycles): one row per violation. Runs as its caller: a superuser checks every tenant, an app''s role its own. Errors: 22023 a role under row-level security with no tenant in context.';
COMMENT ON FUNCTION todo.distribute() IS
    'Spreads the store over Citus workers by tenant (run once, on the coordinator, as the tables'' owner; idempotent). Returns each table and how it is distributed. Errors: 55000 Citus not installed, not the coordinator, or a worker without this version of pg_todos; 42501 a role that does not own the tables.';
COMMENT ON FUNCTION todo.authenticate(text) IS
    'The tenant, label and default list of an active bearer token, and whether it was made for a person; no row for an unknown, malformed, revoked or expired one (todo.token_refusal says which). For the HTTP service (todo.grant_usage grants it). Raises nothing.';
COMMENT ON FUNCTION todo.revoke_token(uuid) IS
    'Revokes a bearer token at once (its next request gets 401); true when it was active, false when unknown or already revoked. Raises nothing.';
COMMENT ON FUNCTION todo.grant_usage(regrole, text, boolean) IS
    'Grants a role the use of pg_todos. tenant: the one tenant it may ever act for (NULL: any, for a service such as pg_todos serve). plain_sql: true for an app (plain SQL on todo.todos, todo.dependencies, todo.checklist_items and todo.comments, reads of its history), false for an agent (the functions only). Idempotent; never changes a role''s tenant. Errors: 22004 a NULL role or plain_sql, 42704 unknown tenant, 55000 granted already with another tenant, 22023 a role that bypasses row-level security bound to a tenant.';
COMMENT ON FUNCTION todo.revoke_usage(regrole) IS
    'Takes back everything todo.grant_usage gave a role (its tables, its functions, its tenant binding); true when it was granted. Errors: 22004 a NULL role.';

-- ============================================================================================
-- End of: a public API that says what is public.
-- ============================================================================================
