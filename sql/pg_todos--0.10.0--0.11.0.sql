-- pg_todos 0.10.0 -> 0.11.0: a dialect is one declaration. todo.dialects() lists the tool
-- dialects (name, earlier names, runtime, description, tools, list shape); the comments that
-- named every dialect point to it instead, so a new dialect changes no upgrade script.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.11.0'" to load this file. \quit

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
-- conversations, max_todos todos of each and max_attention attention rows are built, with
-- counts of what was left out; the conversations are chosen from one aggregate over the
-- tenant's live todos (no JSON is built for the others).
DECLARE
    tenant text := todo.current_tenant();
    max_conversations constant integer := 50;
    max_todos constant integer := 200;
    max_attention constant integer := 200;
BEGIN
RETURN (WITH groups AS (
    SELECT t.conversation_id, max(t.updated_at) AS active, count(*) AS total
      FROM todo.todos t
     WHERE t.tenant_id = tenant AND t.archived_at IS NULL
     GROUP BY t.conversation_id
), chosen AS (
    SELECT g.conversation_id, g.active, g.total, count(*) OVER () AS all_groups,
           row_number() OVER (ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id) AS rank
      FROM groups g
     ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id
     LIMIT max_conversations
), shown AS (
    SELECT c.rank, t.*,
           (SELECT coalesce(jsonb_agg(d.depends_on ORDER BY d.depends_on), '[]')
              FROM todo.dependencies d
              JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
             WHERE d.tenant_id = tenant AND d.todo_id = t.id
               AND b.status NOT IN ('completed', 'canceled')) AS blocked_by,
           (SELECT jsonb_build_object('done', count(*) FILTER (WHERE s.status = 'completed'), 'total', count(*))
              FROM todo.todos s
             WHERE s.tenant_id = tenant AND s.parent_id = t.id
               AND s.status <> 'canceled' AND s.archived_at IS NULL
            HAVING count(*) > 0) AS subtasks
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
               'blocked_by', blocked_by, 'parent_id', parent_id, 'subtasks', subtasks,
               'updated_at', updated_at)
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
                                                                   'todos', l.todos,
                                                                   'todos_omitted', c.total - l.n)
                                                ORDER BY c.rank)
                                 FROM chosen c JOIN lists l ON l.rank = c.rank), '[]'),
    'conversations_omitted', coalesce((SELECT max(c.all_groups) - count(*) FROM chosen c), 0),
    'attention', coalesce((SELECT jsonb_agg(to_jsonb(a) - 'tenant_id' - 'all_rows' ORDER BY a.since, a.todo_id)
                             FROM attention a), '[]'),
    'attention_omitted', coalesce((SELECT max(a.all_rows) - count(*) FROM attention a), 0),
    'limits', jsonb_build_object('conversations', max_conversations, 'todos', max_todos,
                                 'attention', max_attention)));
END
$fn$;

-- The roles granted so far get the new function.
SELECT todo.grant_usage(r.role, r.tenant_id, r.plain_sql) FROM todo.roles r ORDER BY r.role::oid;
