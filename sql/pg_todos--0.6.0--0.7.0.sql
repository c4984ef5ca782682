-- pg_todos 0.6.0 → 0.7.0: scaling out on Citus (todo.distribute and what a distributed
-- store needs). Each ALTER TABLE does one thing (Citus refuses several subcommands in one
-- statement on a distributed table).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.7.0'" to load this file. \quit

-- todo.verify() checks tenant by tenant (todo.verify_tenant), every statement on one tenant
DROP FUNCTION todo.verify();
-- todo.verify(): the store's invariants, one row per violation (none: all hold), tenant by
-- tenant (todo.verify_tenant): every statement names one tenant, so on a distributed store
-- (Citus) each runs on that tenant's worker. Runs as the caller: under row-level security it
-- checks the tenant in context; a superuser checks every tenant.
CREATE FUNCTION todo.verify_tenant(tenant text) RETURNS TABLE (tenant_id text, todo_id bigint, problem text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
-- PL/pgSQL, not SQL: Citus plans no statement of an SQL function that has parameters
#variable_conflict use_column
BEGIN
RETURN QUERY
    -- completed_at is set exactly when the todo is terminal
    SELECT t.tenant_id, t.id, format('status %s but completed_at %s', t.status,
                                     CASE WHEN t.completed_at IS NULL THEN 'unset' ELSE 'set' END)
      FROM todo.todos t
     WHERE t.tenant_id = $1 AND (t.completed_at IS NOT NULL) <> (t.status IN ('completed', 'canceled'))
    UNION ALL
    SELECT t.tenant_id, t.id, 'in_progress but started_at unset'
      FROM todo.todos t WHERE t.tenant_id = $1 AND t.status = 'in_progress' AND t.started_at IS NULL
    UNION ALL
    SELECT t.tenant_id, t.id, 'updated_at before created_at'
      FROM todo.todos t WHERE t.tenant_id = $1 AND t.updated_at < t.created_at
    UNION ALL
    -- the tenant's counter is past every id it handed out
    SELECT t.tenant_id, max(t.id), format('id %s above the tenant counter %s', max(t.id), c.last_id)
      FROM todo.todos t LEFT JOIN todo.counters c ON c.tenant_id = t.tenant_id
     WHERE t.tenant_id = $1
     GROUP BY t.tenant_id, c.last_id
    HAVING max(t.id) > coalesce(c.last_id, 0)
    UNION ALL
    -- an id a range has still to hand out is not in use
    SELECT t.tenant_id, t.id, format('id %s is still to be handed out by id range %s', t.id, r.slot)
      FROM todo.todos t JOIN todo.id_ranges r ON r.tenant_id = t.tenant_id AND t.id BETWEEN r.next_id AND r.last_id
     WHERE t.tenant_id = $1
    UNION ALL
    -- the event log accounts for every todo: its insert, and its last status
    SELECT t.tenant_id, t.id, 'no insert event'
      FROM todo.todos t
     WHERE t.tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM todo.events e
                        WHERE e.tenant_id = $1 AND e.todo_id = t.id AND e.action = 'insert')
    UNION ALL
    SELECT t.tenant_id, t.id, format('row is %s but its last event says %s', t.status, l.new_status)
      FROM todo.todos t
     CROSS JOIN LATERAL (SELECT e.new_status FROM todo.events e
                          WHERE e.tenant_id = $1 AND e.todo_id = t.id
                          ORDER BY e.version DESC LIMIT 1) l
     WHERE t.tenant_id = $1 AND l.new_status IS DISTINCT FROM t.status
    UNION ALL
    -- and every change starts where the one before it ended
    SELECT e.tenant_id, e.todo_id,
           format('event %s starts from %s but event %s ended at %s', e.version, e.old_status, e.prev_version, e.prev_status)
      FROM (SELECT ev.tenant_id, ev.todo_id, ev.version, ev.action, ev.old_status,
                   lag(ev.version) OVER w AS prev_version, lag(ev.new_status) OVER w AS prev_status
              FROM todo.events ev
             WHERE ev.tenant_id = $1
            WINDOW w AS (PARTITION BY ev.tenant_id, ev.todo_id ORDER BY ev.version)) e
     WHERE e.action <> 'insert' AND e.prev_version IS NOT NULL AND e.old_status IS DISTINCT FROM e.prev_status
    UNION ALL
    -- a claim is held only on an in_progress todo, with a lease (also a CHECK constraint)
    SELECT t.tenant_id, t.id, format('claimed by %s but %s, lease %s', t.claimed_by, t.status,
                                     coalesce(t.lease_expires_at::text, 'unset'))
      FROM todo.todos t
     WHERE t.tenant_id = $1 AND t.claimed_by IS NOT NULL AND (t.status <> 'in_progress' OR t.lease_expires_at IS NULL)
    UNION ALL
    -- the dependency graph has no cycle
    SELECT DISTINCT w.tenant_id, w.start_id, 'waits for itself through a cycle of dependencies'
      FROM (WITH RECURSIVE walk(tenant_id, start_id, at) AS (
                SELECT d.tenant_id, d.todo_id, d.depends_on FROM todo.dependencies d WHERE d.tenant_id = $1
                UNION
                SELECT w.tenant_id, w.start_id, d.depends_on
                  FROM walk w JOIN todo.dependencies d ON d.tenant_id = w.tenant_id AND d.todo_id = w.at
                 WHERE d.tenant_id = $1)
            SELECT * FROM walk) w
     WHERE w.at = w.start_id;
END
$fn$;
COMMENT ON FUNCTION todo.verify_tenant(text) IS
    'The store''s invariants for one tenant (see todo.verify): one row per violation.';

CREATE FUNCTION todo.verify() RETURNS TABLE (tenant_id text, todo_id bigint, problem text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    tenant text;
BEGIN
    FOR tenant IN SELECT t.tenant_id FROM todo.tenants t ORDER BY t.tenant_id LOOP
        RETURN QUERY SELECT * FROM todo.verify_tenant(tenant);
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION todo.verify() IS
    'The store''s invariants (stamps agree with status, counters, event log, claims, no dependency cycles): one row per violation.';

-- the view and the board in forms Citus can plan
CREATE OR REPLACE VIEW todo.needs_attention WITH (security_invoker = true) AS
SELECT a.tenant_id, a.todo_id, a.conversation_id, a.subject, a.status, a.claimed_by, a.reason, a.since,
       floor(extract(epoch FROM now() - a.since))::bigint AS for_seconds
  FROM (SELECT t.tenant_id, t.id AS todo_id, t.conversation_id, t.subject, t.status, t.claimed_by,
               -- at most one reason per todo; one CASE (not a union per reason), so that on a
               -- distributed store Citus runs the whole view on each worker
               CASE WHEN t.claimed_by IS NOT NULL AND t.lease_expires_at < now() THEN 'lease_lapsed'
                    WHEN t.status = 'in_progress'
                         AND t.updated_at < now() - coalesce(current_setting('todo.attention_idle', true), '15min')::interval
                         THEN 'no_heartbeat'
                    WHEN (t.status = 'blocked'
                          OR (t.status = 'pending' AND EXISTS (
                              SELECT 1 FROM todo.dependencies d
                                JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                               WHERE d.tenant_id = t.tenant_id AND d.todo_id = t.id
                                 AND b.status IN ('pending', 'in_progress', 'blocked'))))
                         AND t.updated_at < now() - coalesce(current_setting('todo.attention_blocked', true), '1h')::interval
                         THEN 'blocked'
               END AS reason,
               CASE WHEN t.claimed_by IS NOT NULL AND t.lease_expires_at < now() THEN t.lease_expires_at
                    ELSE t.updated_at END AS since
          FROM todo.todos t
         WHERE t.archived_at IS NULL) a
 WHERE a.reason IS NOT NULL;
COMMENT ON VIEW todo.needs_attention IS
    'Todos that need a person: reason lease_lapsed (a claim whose lease ran out), no_heartbeat (in progress, unchanged for todo.attention_idle), blocked (blocked or waiting on open todos for todo.attention_blocked); since when and for how many seconds.';
COMMENT ON COLUMN todo.needs_attention.reason IS 'lease_lapsed, no_heartbeat or blocked.';
COMMENT ON COLUMN todo.needs_attention.since IS 'When the lease ran out, or the todo last changed.';

CREATE OR REPLACE FUNCTION todo.board() RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
-- PL/pgSQL with the tenant in a variable: each statement names one tenant, so Citus sends it
-- to the tenant's worker
DECLARE
    tenant text := todo.current_tenant();
BEGIN
RETURN (WITH shown AS (
    SELECT t.*,
           (SELECT coalesce(jsonb_agg(d.depends_on ORDER BY d.depends_on), '[]')
              FROM todo.dependencies d
              JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
             WHERE d.tenant_id = tenant AND d.todo_id = t.id
               AND b.status IN ('pending', 'in_progress', 'blocked')) AS blocked_by,
           (SELECT jsonb_build_object('done', count(*) FILTER (WHERE s.status = 'completed'), 'total', count(*))
              FROM todo.todos s
             WHERE s.tenant_id = tenant AND s.parent_id = t.id
               AND s.status <> 'canceled' AND s.archived_at IS NULL
            HAVING count(*) > 0) AS subtasks
      FROM todo.todos t
     WHERE t.tenant_id = tenant AND t.archived_at IS NULL
), lists AS (
    SELECT conversation_id, max(updated_at) AS active,
           jsonb_agg(jsonb_build_object(
               'id', id, 'subject', subject, 'active_form', active_form, 'status', status,
               'priority', priority, 'owner', owner, 'agent_id', agent_id, 'claimed_by', claimed_by,
               'lease_expires_at', lease_expires_at,
               'lease_seconds_left', CASE WHEN claimed_by IS NOT NULL
                   THEN greatest(0, ceil(extract(epoch FROM lease_expires_at - now())))::bigint END,
               'blocked_by', blocked_by, 'parent_id', parent_id, 'subtasks', subtasks,
               'updated_at', updated_at)
               ORDER BY position, id) AS todos
      FROM shown
     GROUP BY conversation_id
)
SELECT jsonb_build_object(
    'tenant', tenant,
    'now', now(),
    'conversations', coalesce((SELECT jsonb_agg(jsonb_build_object('conversation_id', l.conversation_id, 'todos', l.todos)
                                                ORDER BY l.conversation_id IS NOT NULL, l.active DESC, l.conversation_id)
                                 FROM lists l), '[]'),
    'attention', coalesce((SELECT jsonb_agg(to_jsonb(a) - 'tenant_id' ORDER BY a.since, a.todo_id)
                             FROM todo.needs_attention a
                            WHERE a.tenant_id = tenant), '[]')));
END
$fn$;

-- Scaling out on Citus: todo.distribute() spreads the store over Citus workers by tenant.
-- todo.tenants and todo.tokens become reference tables (a copy on every node); every
-- tenant-keyed table is distributed by tenant_id, colocated with todo.todos, so each
-- tenant's rows, and every statement the extension runs for one tenant, live on one worker.

-- The record that the store is distributed (one row, written by todo.distribute()). Not in a
-- dump: a database restored from one is not distributed until todo.distribute() runs there.
CREATE TABLE todo.distribution (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    distributed_at  timestamptz NOT NULL DEFAULT now(),
    distributed_by  text NOT NULL DEFAULT current_user,
    pg_todos_version text NOT NULL,
    citus_version   text NOT NULL
);
COMMENT ON TABLE todo.distribution IS
    'One row once todo.distribute() has spread the store over Citus workers: when, by whom, at which versions.';
ALTER TABLE todo.distribution ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.distribution FORCE ROW LEVEL SECURITY;
CREATE POLICY readable ON todo.distribution FOR SELECT USING (true);
GRANT SELECT ON todo.distribution TO PUBLIC;

-- The tables in the order Citus needs them: reference tables first, then todo.todos, then the
-- tables colocated with it.
CREATE FUNCTION todo.distribute()
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
    colocated constant text[] := ARRAY['todo.todos', 'todo.counters', 'todo.id_ranges', 'todo.events', 'todo.dependencies'];
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
    'Spreads the store over Citus workers by tenant (run once, on the coordinator, as the tables'' owner; idempotent). Returns each table and how it is distributed.';
REVOKE EXECUTE ON FUNCTION todo.distribute() FROM PUBLIC;
