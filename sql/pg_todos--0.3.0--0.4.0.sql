-- pg_todos 0.3.0 → 0.4.0: faster writes. Writers of one tenant take ids from ranges
-- (todo.id_ranges) instead of waiting for each other on the tenant's counter; the event
-- log's trigger function is Rust instead of PL/pgSQL (same events); backends remember which
-- tenants are registered until todo.tenants changes (a statement trigger tells them).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.4.0'" to load this file. \quit

-- The event log: the trigger stays, its function changes language (same name, same events).
CREATE OR REPLACE FUNCTION todo.todos_log_event()
	RETURNS TRIGGER
	LANGUAGE c
	SET search_path = pg_catalog, todo, pg_temp
	AS 'MODULE_PATHNAME', 'todos_log_event_wrapper';

-- Backends remember which tenants are registered; any change to todo.tenants makes them
-- forget (src/store/ids.rs).
CREATE FUNCTION todo.tenants_changed()
	RETURNS TRIGGER
	LANGUAGE c
	SET search_path = pg_catalog, todo, pg_temp
	AS 'MODULE_PATHNAME', 'tenants_changed_wrapper';
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants
    FOR EACH STATEMENT EXECUTE FUNCTION todo.tenants_changed();

-- Per-tenant id ranges: runs of ids taken from the counter, handed out in order by writers
-- that hold the range (SKIP LOCKED), so writers of one tenant do not wait for each other.
CREATE TABLE todo.id_ranges (
    tenant_id text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
    slot      integer NOT NULL,
    next_id   bigint NOT NULL,
    last_id   bigint NOT NULL,
    PRIMARY KEY (tenant_id, slot),
    CONSTRAINT id_ranges_check CHECK (next_id > 0 AND next_id <= last_id + 1)
);
COMMENT ON TABLE todo.id_ranges IS 'Per-tenant runs of todo ids still to hand out (next_id through last_id); written by the extension.';
REVOKE ALL ON todo.id_ranges FROM PUBLIC;
ALTER TABLE todo.id_ranges ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.id_ranges FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.id_ranges
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.id_ranges', '');
COMMENT ON TABLE todo.counters IS 'Per-tenant id counter: the last todo id given to a range (todo.id_ranges).';

-- Every role granted usage before (it can update todo.counters) gets the ranges too.
DO $do$
DECLARE
    grantee regrole;
BEGIN
    FOR grantee IN
        SELECT DISTINCT a.grantee::regrole
          FROM pg_class c, aclexplode(c.relacl) a
         WHERE c.oid = 'todo.counters'::regclass AND a.privilege_type = 'UPDATE' AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON todo.id_ranges TO %s', grantee);
    END LOOP;
END
$do$;

CREATE OR REPLACE FUNCTION todo.grant_usage(role regrole) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    EXECUTE format('GRANT SELECT ON todo.tenants TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON todo.counters TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON todo.id_ranges TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.todos TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT ON todo.events TO %s', role);
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON todo.dependencies TO %s', role);
END
$fn$;

-- todo.verify() also checks that no id in use is still to be handed out by a range.
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
    -- an id a range has still to hand out is not in use
    SELECT t.tenant_id, t.id, format('id %s is still to be handed out by id range %s', t.id, r.slot)
      FROM todo.todos t JOIN todo.id_ranges r ON r.tenant_id = t.tenant_id AND t.id BETWEEN r.next_id AND r.last_id
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
