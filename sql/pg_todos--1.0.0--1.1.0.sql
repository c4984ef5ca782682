-- pg_todos 1.0.0 -> 1.1.0: nothing lost, nothing written where it should not be. An id is never
-- handed to a second todo (rows that were are repaired), a whole-list write never touches what
-- its writer could not see, the trackers number their tasks from the store.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.1.0'" to load this file. \quit

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
INSERT INTO todo.caller_numbers (tenant_id, conversation_id, prefix, last_number)
SELECT t.tenant_id, t.conversation_id, upper(m[1]), max(m[2]::bigint)
  FROM todo.todos t
 CROSS JOIN LATERAL regexp_match(t.external_id, '^((?:TASK-)?(?:[0-9]+\.)*)([0-9]{1,18})$', 'i') m
 WHERE t.conversation_id IS NOT NULL AND t.external_id IS NOT NULL AND m IS NOT NULL AND m[2]::bigint > 0
 GROUP BY t.tenant_id, t.conversation_id, upper(m[1]);

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
