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
REVOKE EXECUTE ON FUNCTION todo.distribute() FROM PUBLIC;
