-- pg_todos 0.8.0 -> 0.9.0: hardening against hostile input (roles bound to a tenant, agent and
-- app roles, the context valid only in the transaction that set it, row locks instead of
-- advisory locks, input limits, a polynomial cycle check, a bounded board and event catch-up).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.9.0'" to load this file. \quit

-- Input size limits (the todo.max_* settings, src/limits.rs). todo.call, todo.call_mcp and
-- todo.rest hand their jsonb to the library, which measures its JSON text before printing it
-- (jsonb::text in SQL would print a number such as 1e131071, 131,072 digits, whole first).
CREATE OR REPLACE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_jsonb_wrapper';
CREATE OR REPLACE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_mcp_jsonb_wrapper';
CREATE OR REPLACE FUNCTION todo.rest(method text, path text, body jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'rest_jsonb_wrapper';

-- ===========================================================================================
-- Roles: bound to a tenant, app or agent; the functions run as the extension's owner; the
-- event log, counters and locks are written only by the extension; row locks.
-- ===========================================================================================

-- Lock rows (src/store/locks.rs): replace the advisory locks, which any role could take.
CREATE TABLE todo.locks (
    tenant_id       text NOT NULL,
    name            text NOT NULL,
    checklist       jsonb CONSTRAINT locks_checklist_check CHECK (jsonb_typeof(checklist) = 'array'),
    written_in_turn text,
    PRIMARY KEY (tenant_id, name)
);
-- Its foreign key to todo.tenants: now on one server. On a distributed store (todo.tenants a
-- reference table) Citus could not keep a local table referencing it: todo.distribute(), the
-- step after the update, distributes todo.locks and then adds the key.
DO $do$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        ALTER TABLE todo.locks ADD CONSTRAINT locks_tenant_id_fkey
            FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
    ELSE
        EXECUTE $sql$
            DO $inner$
            BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'todo.tenants'::regclass) THEN
                    ALTER TABLE todo.locks ADD CONSTRAINT locks_tenant_id_fkey
                        FOREIGN KEY (tenant_id) REFERENCES todo.tenants ON DELETE CASCADE;
                END IF;
            END
            $inner$
        $sql$;
    END IF;
END
$do$;
COMMENT ON TABLE todo.locks IS 'Per-tenant lock rows (whole-list replaces of a list, the dependency graph), locked FOR UPDATE by the extension; a list''s row also keeps what belongs to the list rather than to a todo. No role but the owner reads it.';
COMMENT ON COLUMN todo.locks.tenant_id IS 'The tenant.';
COMMENT ON COLUMN todo.locks.name IS 'What the row serializes: list:<conversation> (whole-list replaces) or dependencies (the graph).';
COMMENT ON COLUMN todo.locks.checklist IS 'On a list row: the markdown document Goose''s and Continue''s tools wrote (its notes as text, each checkbox line as the todo it became), read back with the todos as they are now.';
COMMENT ON COLUMN todo.locks.written_in_turn IS 'On a list row: the turn of its last LangChain write_todos (LangChain allows one per model turn).';
REVOKE ALL ON todo.locks FROM PUBLIC;
ALTER TABLE todo.locks ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.locks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.locks
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('todo.locks', '');

-- Granted roles and their tenants.
CREATE TABLE todo.roles (
    role       regrole PRIMARY KEY,
    tenant_id  text CONSTRAINT roles_tenant_id_check CHECK (tenant_id <> ''),
    plain_sql  boolean NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE todo.roles IS 'Roles granted by todo.grant_usage: bound to one tenant or not, plain SQL or functions only. Changed only through todo.grant_usage and todo.revoke_usage.';
COMMENT ON COLUMN todo.roles.role IS 'The role granted.';
COMMENT ON COLUMN todo.roles.tenant_id IS 'The one tenant the role may act for; NULL: any tenant (a service).';
COMMENT ON COLUMN todo.roles.plain_sql IS 'true: an app (plain SQL on todo.todos); false: an agent (the functions only).';
COMMENT ON COLUMN todo.roles.granted_at IS 'When todo.grant_usage first granted it.';
REVOKE ALL ON todo.roles FROM PUBLIC;
ALTER TABLE todo.roles ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.roles FORCE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('todo.roles', '');

CREATE FUNCTION todo."roles_changed"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'roles_changed_wrapper';
ALTER FUNCTION todo.roles_changed() SET search_path = pg_catalog, todo, pg_temp;
COMMENT ON FUNCTION todo.roles_changed() IS
    'Trigger on todo.roles: tells every backend to forget the tenant bindings it remembered.';
CREATE TRIGGER roles_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.roles
    FOR EACH STATEMENT EXECUTE FUNCTION todo.roles_changed();

-- The context functions read this backend's per-transaction state: never in a parallel worker.
ALTER FUNCTION todo.current_tenant() PARALLEL RESTRICTED;
ALTER FUNCTION todo.current_conversation() PARALLEL RESTRICTED;
ALTER FUNCTION todo.current_agent() PARALLEL RESTRICTED;
ALTER FUNCTION todo.current_turn() PARALLEL RESTRICTED;
COMMENT ON FUNCTION todo.set_context(text, text, text, text) IS
    'Sets the context for the current transaction, as SET LOCAL would: tenant (required, registered in todo.tenants), conversation (NULL: tenant-wide), agent, turn. Returns nothing. Errors: 22023 tenant NULL or blank; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.current_tenant() IS
    'The tenant in context (todo.tenant, set in this transaction; for a role bound to a tenant and no tenant set, its own); the default of every tenant_id column. Errors: 22023 when none is set, or only by an earlier transaction (never "all tenants"); 42501 a role bound to another tenant.';

-- The functions that act on todos run as the extension's owner.
ALTER FUNCTION todo.set_context(text, text, text, text) SECURITY DEFINER;
ALTER FUNCTION todo.acp_plan(text) SECURITY DEFINER PARALLEL RESTRICTED;
ALTER FUNCTION todo.block(bigint, bigint) SECURITY DEFINER;
ALTER FUNCTION todo.call_json(text, text) SECURITY DEFINER;
ALTER FUNCTION todo.call_mcp_json(text, text) SECURITY DEFINER;
ALTER FUNCTION todo.changes_since(text) SECURITY DEFINER PARALLEL RESTRICTED;
ALTER FUNCTION todo.channel() SECURITY DEFINER PARALLEL RESTRICTED;
ALTER FUNCTION todo.claim(bigint, integer) SECURITY DEFINER;
ALTER FUNCTION todo.export_tasks(text) SECURITY DEFINER PARALLEL RESTRICTED;
ALTER FUNCTION todo.finish(bigint, bigint, text, text) SECURITY DEFINER;
ALTER FUNCTION todo.heartbeat(bigint, bigint, integer) SECURITY DEFINER;
ALTER FUNCTION todo.import_tasks(text, jsonb) SECURITY DEFINER;
ALTER FUNCTION todo.list_as(text, text) SECURITY DEFINER PARALLEL RESTRICTED;
-- the runtimes' dialects added in 0.9.0
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a runtime''s shape: opencode, claude-tasks, claude-todowrite, codex, gemini, cursor, roo, copilot, langchain, openhands, qwen, goose, hermes, crush, kimi, vibe, zed or continue.';
ALTER FUNCTION todo.ready(integer) SECURITY DEFINER;
ALTER FUNCTION todo.release(bigint, bigint) SECURITY DEFINER;
ALTER FUNCTION todo.rest_json(text, text, text) SECURITY DEFINER;
ALTER FUNCTION todo.todo_open_block(text) SECURITY DEFINER;
ALTER FUNCTION todo.todo_open_preamble(text) SECURITY DEFINER;
ALTER FUNCTION todo.todo_writ(text) SECURITY DEFINER;
ALTER FUNCTION todo.unblock(bigint, bigint) SECURITY DEFINER;
ALTER FUNCTION todo.board() SECURITY DEFINER;

-- todo.grant_usage(role, tenant, plain_sql) and todo.revoke_usage(role)
DROP FUNCTION todo.grant_usage(regrole);
CREATE FUNCTION todo.grant_usage(role regrole, tenant text DEFAULT NULL, plain_sql boolean DEFAULT true) RETURNS void
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
                   'todo.locks, todo.roles, todo.tokens, todo.needs_attention FROM %s', grant_usage.role);
    IF grant_usage.plain_sql THEN
        EXECUTE format('GRANT SELECT ON todo.tenants TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON todo.todos TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT ON todo.events TO %s', grant_usage.role);
        -- read-only, for todo.verify() (which checks the ids against them)
        EXECUTE format('GRANT SELECT ON todo.counters, todo.id_ranges TO %s', grant_usage.role);
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON todo.dependencies TO %s', grant_usage.role);
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
    'Grants a role the use of pg_todos. tenant: the one tenant it may ever act for (NULL: any, for a service such as pg_todos serve). plain_sql: true for an app (plain SQL on todo.todos and todo.dependencies, reads of its history), false for an agent (the functions only). Idempotent; never changes a role''s tenant. Errors: 42704 unknown tenant, 55000 granted already with another tenant, 22023 a role that bypasses row-level security bound to a tenant.';
REVOKE EXECUTE ON FUNCTION todo.grant_usage(regrole, text, boolean) FROM PUBLIC;

CREATE FUNCTION todo.revoke_usage(role regrole) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    EXECUTE format('REVOKE ALL ON todo.tenants, todo.counters, todo.id_ranges, todo.todos, todo.events, todo.dependencies, '
                   'todo.locks, todo.roles, todo.tokens, todo.needs_attention FROM %s', revoke_usage.role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA todo FROM %s', revoke_usage.role);
    DELETE FROM todo.roles r WHERE r.role = revoke_usage.role;
    RETURN FOUND;
END
$fn$;
COMMENT ON FUNCTION todo.revoke_usage(regrole) IS
    'Takes back everything todo.grant_usage gave a role (its tables, its functions, its tenant binding); true when it was granted.';
REVOKE EXECUTE ON FUNCTION todo.revoke_usage(regrole) FROM PUBLIC;

-- Only granted roles may call the functions (the four context readers stay PUBLIC's).
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA todo FROM PUBLIC;
GRANT EXECUTE ON FUNCTION todo.current_tenant(), todo.current_conversation(), todo.current_agent(), todo.current_turn() TO PUBLIC;

-- Every role 0.8.0's todo.grant_usage granted (it had SELECT on todo.todos) is granted
-- again, as an app role for any tenant: it keeps plain SQL and the functions, and loses the
-- writes of the event log and the id counters. Bind agents' roles to their tenant with
-- todo.revoke_usage(role) and todo.grant_usage(role, tenant, plain_sql => false).
DO $do$
DECLARE
    granted regrole;
BEGIN
    FOR granted IN
        SELECT DISTINCT a.grantee::regrole FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
         WHERE c.oid = 'todo.todos'::regclass AND a.privilege_type = 'SELECT'
           AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        PERFORM todo.grant_usage(granted);
    END LOOP;
END
$do$;

-- todo.distribute(): todo.roles is a reference table, todo.locks is colocated with todo.todos.
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
    colocated constant text[] := ARRAY['todo.todos', 'todo.counters', 'todo.id_ranges', 'todo.events', 'todo.dependencies', 'todo.locks'];
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

-- ===========================================================================================
-- The HTTP service (pg_todos serve): tokens made for a person, a bounded board, the event
-- catch-up a page at a time.
-- ===========================================================================================

-- Only a token made for a person may act as person:<label> (X-Actor: person). Tokens made
-- before 0.9.0 are an agent's: make the board's people new ones (person => true), or
-- UPDATE todo.tokens SET person = true WHERE token_id = ... as an administrator.
ALTER TABLE todo.tokens ADD COLUMN IF NOT EXISTS person boolean NOT NULL DEFAULT false;
-- no CHECK on it (todo.create_token refuses a blank one): on a distributed store Citus sends
-- an ADD COLUMN with a constraint to the workers as several commands, which it cannot
ALTER TABLE todo.tokens ADD COLUMN IF NOT EXISTS default_list text;
COMMENT ON COLUMN todo.tokens.default_list IS 'The list (conversation) the token''s MCP calls (/mcp) work on when the request names none; NULL: the tenant-wide pool.';
COMMENT ON COLUMN todo.tokens.person IS 'true: made for a person (the board); only such a token may send X-Actor: person and be recorded as person:<label>.';

DROP FUNCTION todo.create_token(text, text);
CREATE FUNCTION todo.create_token(tenant text, label text, person boolean DEFAULT false, default_list text DEFAULT NULL)
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
    IF NOT EXISTS (SELECT 1 FROM todo.tenants t WHERE t.tenant_id = create_token.tenant) THEN
        RAISE EXCEPTION 'todo.create_token: tenant "%" is not registered', create_token.tenant
            USING ERRCODE = '42704', HINT = 'INSERT INTO todo.tenants (tenant_id) VALUES (...) first.';
    END IF;
    INSERT INTO todo.tokens AS k (tenant_id, label, secret_hash, person, default_list)
    VALUES (create_token.tenant, create_token.label, sha256(convert_to(secret, 'UTF8')), create_token.person,
            create_token.default_list)
    RETURNING k.token_id INTO create_token.token_id;
    token := secret;
    RETURN NEXT;
END
$fn$;
COMMENT ON FUNCTION todo.create_token(text, text, boolean, text) IS
    'Creates a bearer token of the HTTP service for a tenant; returns its id and its secret, shown only this once (only a hash is stored). person => true: a token for a person (the board), the only kind that may act as person:<label> (X-Actor: person); false (the default): an agent''s. default_list: the list (conversation) its MCP calls work on when the request names none (/mcp?list=). Errors: 22023 blank label or default list, 22004 person NULL, 42704 unknown tenant.';
REVOKE EXECUTE ON FUNCTION todo.create_token(text, text, boolean, text) FROM PUBLIC;

DROP FUNCTION todo.authenticate(text);
CREATE FUNCTION todo.authenticate(token text) RETURNS TABLE (tenant_id text, label text, person boolean, default_list text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    SELECT k.tenant_id, k.label, k.person, k.default_list FROM todo.tokens k
     WHERE k.secret_hash = pg_catalog.sha256(pg_catalog.convert_to(authenticate.token, 'UTF8'))
       AND k.revoked_at IS NULL
$fn$;
COMMENT ON FUNCTION todo.authenticate(text) IS
    'The tenant, label and default list of an active bearer token, and whether it was made for a person; no row for an unknown, malformed or revoked one. For the HTTP service (todo.grant_usage grants it).';
REVOKE EXECUTE ON FUNCTION todo.authenticate(text) FROM PUBLIC;

-- The event catch-up a page at a time (src/surfaces/tools/opencode.rs).
CREATE FUNCTION todo."changes_since"(
	"since" TEXT /* Option < & str > */,
	"after" TEXT /* Option < & str > */,
	"page_size" INT /* Option < i32 > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL RESTRICTED SECURITY DEFINER
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'changes_since_page_wrapper';
COMMENT ON FUNCTION todo.changes_since(text, text, integer) IS
    'changes_since a page at a time: {"cursor", "changes", "next"}; at most page_size (1 to 1000) conversations, fewer once their lists pass 256 KiB of JSON, ordered by id (bytewise) with the tenant-wide pool last; next: the after of the next page, null on the last. Keep the cursor of a catch-up''s first page.';
REVOKE EXECUTE ON FUNCTION todo.changes_since(text, text, integer) FROM PUBLIC;

-- The board, bounded.
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
               AND b.status IN ('pending', 'in_progress', 'blocked')) AS blocked_by,
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
COMMENT ON FUNCTION todo.board() IS
    'The board of the tenant in context, bounded: {"tenant", "now", "conversations": [{"conversation_id", "todos", "todos_omitted"}] (the tenant-wide pool first, then the most recently active; at most 50 conversations of at most 200 todos each, in list order), "conversations_omitted", "attention": the needs_attention rows (at most 200, the oldest first), "attention_omitted", "limits": {"conversations": 50, "todos": 200, "attention": 200}}; the *_omitted counts say what was left out. Errors: 22023 when no tenant is in context.';

-- The roles granted so far get the functions made again above.
SELECT todo.grant_usage(r.role, r.tenant_id, r.plain_sql) FROM todo.roles r ORDER BY r.role::oid;

-- The rules of a todo row are checked by the before-write trigger, once per row in compiled
-- code (core/src/row_checks.rs), with the same SQLSTATE (23514) and constraint names:
-- PostgreSQL re-read these eleven expressions from their stored text for every statement
-- that wrote the table. One constraint per statement (Citus propagates each to the shards).
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_archived_at_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_claim_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_completed_at_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_conversation_id_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_external_id_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_id_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_metadata_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_parent_id_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_priority_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_status_check;
ALTER TABLE todo.todos DROP CONSTRAINT IF EXISTS todos_subject_check;
-- todo.id_ranges is written only by the extension's statements, which keep its invariant; its
-- CHECK constraint was parsed again for every id taken.
ALTER TABLE todo.id_ranges DROP CONSTRAINT IF EXISTS id_ranges_check;
COMMENT ON FUNCTION todo.todos_before_write() IS
    'Row trigger of todo.todos (BEFORE INSERT OR UPDATE): allocates the id, enforces the lifecycle (55000), the claim guard (55000, 55006) and the row rules that were CHECK constraints (23514, the constraint''s name), stamps started_at, completed_at and updated_at, bumps version.';

-- todo.events loses its index on (tenant_id, event_at): none of the extension's statements
-- reads events by time (the change feed finds them by transaction, events_tenant_xact; a
-- todo's history by the primary key), and every event paid an entry in it. A store queried
-- by time can create its own (docs/operations.md). Run as a command of its own: on a
-- distributed store Citus sends a DROP INDEX's statement text to the nodes with metadata, and
-- the text of a statement in an update script is the whole script.
DO $do$
BEGIN
    EXECUTE 'DROP INDEX IF EXISTS todo.events_tenant_time';
END
$do$;
