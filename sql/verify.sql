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
    -- no two ranges would hand out one id
    SELECT r.tenant_id, NULL::bigint,
           format('id ranges %s and %s would both hand out ids %s to %s', r.slot, o.slot,
                  greatest(r.next_id, o.next_id), least(r.last_id, o.last_id))
      FROM todo.id_ranges r JOIN todo.id_ranges o
        ON o.tenant_id = r.tenant_id AND o.slot > r.slot
       AND o.next_id <= r.last_id AND r.next_id <= o.last_id
     WHERE r.tenant_id = $1 AND r.next_id <= r.last_id AND o.next_id <= o.last_id
    UNION ALL
    -- a range hands out only ids the counter has given to ranges
    SELECT r.tenant_id, NULL::bigint, format('id range %s would hand out ids to %s, past the tenant counter %s', r.slot, r.last_id,
                                            coalesce(c.last_id::text, '(none)'))
      FROM todo.id_ranges r LEFT JOIN todo.counters c ON c.tenant_id = r.tenant_id
     WHERE r.tenant_id = $1 AND r.next_id <= r.last_id AND r.last_id > coalesce(c.last_id, 0)
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
    'The store''s invariants for one tenant (see todo.verify): one row per violation; NULL: no rows. Errors: 22023 a role under row-level security with no tenant in context.';

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
    'The store''s invariants (stamps agree with status, counters and id ranges, event log, claims, no dependency cycles): one row per violation. Runs as its caller: a superuser checks every tenant, an app''s role its own. Errors: 22023 a role under row-level security with no tenant in context.';
