-- pg_todos bootstrap: every table, index, policy and trigger of the `todo` schema.
-- Rules that keep a tenant-distributed (Citus-style) deployment possible:
--   * every unique key and foreign key starts with tenant_id;
--   * triggers touch only the row itself and same-tenant rows of tenant-keyed tables
--     (todo.counters, todo.events), never todo.tenants;
--   * no global sequence: ids come from the per-tenant counter, events are ordered per todo.

-- Tenants. A tenant exists once it is a row here; deleting it deletes all its rows.
CREATE TABLE todo.tenants (
    tenant_id  text PRIMARY KEY
               CONSTRAINT tenants_tenant_id_check CHECK (tenant_id <> '' AND tenant_id = btrim(tenant_id)),
    name       text,
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE todo.tenants IS 'Registered tenants. Deleting one cascades to its todos, counters and events.';

-- Per-tenant counters: the last todo id handed out. A separate tenant-keyed table (not a
-- column of todo.tenants) so that triggers never touch todo.tenants.
CREATE TABLE todo.counters (
    tenant_id text PRIMARY KEY REFERENCES todo.tenants ON DELETE CASCADE,
    last_id   bigint NOT NULL CHECK (last_id > 0)
);
COMMENT ON TABLE todo.counters IS 'Per-tenant id counter: the last todo id given to a range (todo.id_ranges).';

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

CREATE TABLE todo.todos (
    tenant_id           text NOT NULL DEFAULT todo.current_tenant()
                        REFERENCES todo.tenants ON DELETE CASCADE,
    id                  bigint NOT NULL CHECK (id > 0),
    conversation_id     text DEFAULT todo.current_conversation()
                        CONSTRAINT todos_conversation_id_check CHECK (conversation_id <> ''),
    turn_id             text DEFAULT todo.current_turn(),
    agent_id            text DEFAULT todo.current_agent(),
    subject             text NOT NULL CONSTRAINT todos_subject_check CHECK (btrim(subject) <> ''),
    description         text,
    active_form         text,
    status              text NOT NULL DEFAULT 'pending'
                        CONSTRAINT todos_status_check
                        CHECK (status IN ('pending', 'in_progress', 'completed', 'canceled', 'blocked')),
    priority            text CONSTRAINT todos_priority_check CHECK (priority IN ('high', 'medium', 'low')),
    position            bigint NOT NULL,
    completion_criteria text,
    agent_type          text,
    outcome             text,
    version             integer NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    started_at          timestamptz,
    completed_at        timestamptz,
    parent_id           bigint,
    claimed_by          text,
    lease_expires_at    timestamptz,
    fence               bigint NOT NULL DEFAULT 0,
    owner               text,
    metadata            jsonb CONSTRAINT todos_metadata_check CHECK (jsonb_typeof(metadata) = 'object'),
    external_id         text CONSTRAINT todos_external_id_check CHECK (external_id <> ''),
    archived_at         timestamptz CONSTRAINT todos_archived_at_check CHECK (archived_at IS NULL OR completed_at IS NOT NULL),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT todos_completed_at_check
        CHECK ((completed_at IS NOT NULL) = (status IN ('completed', 'canceled'))),
    CONSTRAINT todos_parent_fkey FOREIGN KEY (tenant_id, parent_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE SET NULL (parent_id),
    CONSTRAINT todos_parent_id_check CHECK (parent_id <> id),
    CONSTRAINT todos_claim_check
        CHECK ((claimed_by IS NULL) = (lease_expires_at IS NULL) AND (claimed_by IS NULL OR status = 'in_progress'))
);
COMMENT ON TABLE todo.todos IS 'Agent todos. conversation_id NULL = tenant-wide. Ids are small integers, unique per tenant.';
COMMENT ON COLUMN todo.todos.conversation_id IS 'NULL: tenant-wide, visible from every conversation of the tenant.';
COMMENT ON COLUMN todo.todos.position IS 'Append-order within the list (the id, unless set); ties broken by id.';
COMMENT ON COLUMN todo.todos.version IS 'Bumped by every UPDATE; (tenant_id, id, version) keys todo.events.';
COMMENT ON COLUMN todo.todos.parent_id IS 'The todo this one is a subtask of (same tenant); NULL when the parent is deleted.';
COMMENT ON COLUMN todo.todos.claimed_by IS 'The agent holding a claim on this in_progress todo (with lease_expires_at); NULL: unclaimed.';
COMMENT ON COLUMN todo.todos.lease_expires_at IS 'When the claim lapses unless renewed (todo.heartbeat); after it the todo is claimable again.';
COMMENT ON COLUMN todo.todos.fence IS 'Fencing number: bumped by every claim; an action that presents an older one is rejected.';
COMMENT ON COLUMN todo.todos.status IS 'pending, in_progress, completed, canceled, or blocked (open, waiting on something outside the list; never claimed or ready).';
COMMENT ON COLUMN todo.todos.owner IS 'Who the todo is assigned to (Claude Code''s task owner); an assignment, not a claim.';
COMMENT ON COLUMN todo.todos.metadata IS 'The caller''s own key/values (a JSON object; Claude Code''s task metadata, merged key by key).';
COMMENT ON COLUMN todo.todos.external_id IS 'The caller''s own id for the todo, unique within its conversation (Cursor''s todo_write ids).';
COMMENT ON COLUMN todo.todos.archived_at IS 'When a whole-list writer left this finished todo off its list: kept as history, on no tool''s list; cleared by a reopen.';

-- The per-conversation list and the tenant-wide browse (seed 000).
CREATE INDEX todos_conversation_list ON todo.todos (tenant_id, conversation_id, status, position);
CREATE INDEX todos_tenant_browse ON todo.todos (tenant_id, status, updated_at DESC);
-- A parent's subtasks (the progress shown in the open block).
CREATE INDEX todos_parent ON todo.todos (tenant_id, parent_id) WHERE parent_id IS NOT NULL;
-- The caller's own ids, one per todo of a conversation.
CREATE UNIQUE INDEX todos_external_id ON todo.todos (tenant_id, conversation_id, external_id)
    WHERE external_id IS NOT NULL;

-- "todo_id waits for depends_on": todo_id is blocked while depends_on is open (pending,
-- in_progress or blocked). Both ends are todos of the same tenant; the graph has no cycles (checked
-- by todo.block under a per-tenant lock).
CREATE TABLE todo.dependencies (
    tenant_id  text NOT NULL,
    todo_id    bigint NOT NULL,
    depends_on bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, todo_id, depends_on),
    CONSTRAINT dependencies_todo_fkey FOREIGN KEY (tenant_id, todo_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT dependencies_depends_on_fkey FOREIGN KEY (tenant_id, depends_on)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT dependencies_check CHECK (todo_id <> depends_on)
);
COMMENT ON TABLE todo.dependencies IS 'Blocking edges: todo_id waits for depends_on while depends_on is open.';
CREATE INDEX dependencies_depends_on ON todo.dependencies (tenant_id, depends_on);

-- Append-only history: one row per change of a todo. Deleting a tenant cascades to
-- todo.counters before todo.todos (its foreign key is older), so the log trigger can tell a
-- tenant's deletion (no counter row) from a todo's.
CREATE TABLE todo.events (
    tenant_id       text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
    todo_id         bigint NOT NULL,
    version         integer NOT NULL,
    action          text NOT NULL CHECK (action IN ('insert', 'update', 'delete')),
    conversation_id text,
    agent_id        text,
    turn_id         text,
    old_status      text,
    new_status      text,
    changes         jsonb,
    event_at        timestamptz NOT NULL DEFAULT now(),
    xact            xid8 DEFAULT pg_current_xact_id(),
    PRIMARY KEY (tenant_id, todo_id, version)
);
COMMENT ON TABLE todo.events IS 'Append-only change log of todo.todos, written by its triggers.';
COMMENT ON COLUMN todo.events.agent_id IS 'The acting agent (todo.agent in context; on insert, the row''s agent_id when unset).';
COMMENT ON COLUMN todo.events.changes IS 'insert: the new row''s non-NULL fields; update: the new values of the changed fields; delete: NULL.';
COMMENT ON COLUMN todo.events.xact IS 'The writing transaction: todo.changes_since finds the events a cursor (a snapshot) did not see. NULL for events written before 0.6.0.';
CREATE INDEX events_tenant_time ON todo.events (tenant_id, event_at);
CREATE INDEX events_tenant_xact ON todo.events (tenant_id, xact);

-- The event log, written AFTER each row change (so it records what was really stored): the
-- Rust trigger function todo.todos_log_event() (src/triggers.rs).
ALTER FUNCTION todo.todos_log_event() SET search_path = pg_catalog, todo, pg_temp;

ALTER FUNCTION todo.todos_before_write() SET search_path = pg_catalog, todo, pg_temp;

CREATE TRIGGER todos_before_write BEFORE INSERT OR UPDATE ON todo.todos
    FOR EACH ROW EXECUTE FUNCTION todo.todos_before_write();
CREATE TRIGGER todos_log_event AFTER INSERT OR UPDATE OR DELETE ON todo.todos
    FOR EACH ROW EXECUTE FUNCTION todo.todos_log_event();

-- Backends remember which tenants are registered; any change to todo.tenants makes them
-- forget (src/store/ids.rs).
ALTER FUNCTION todo.tenants_changed() SET search_path = pg_catalog, todo, pg_temp;
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants
    FOR EACH STATEMENT EXECUTE FUNCTION todo.tenants_changed();

-- The dependency graph stays acyclic whoever writes it (see the function's comment in
-- src/triggers.rs).
ALTER FUNCTION todo.dependencies_before_insert() SET search_path = pg_catalog, todo, pg_temp;
CREATE TRIGGER dependencies_before_insert BEFORE INSERT ON todo.dependencies
    FOR EACH ROW EXECUTE FUNCTION todo.dependencies_before_insert();

-- Row-level security: ENABLE and FORCE everywhere; one policy per table, keyed on the tenant
-- in context. todo.current_tenant() raises 22023 when todo.tenant is unset, empty or blank,
-- so a role subject to RLS gets an error, never "all tenants" and never a silent no-op.
ALTER TABLE todo.tenants  ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.counters ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.id_ranges ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.todos    ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.events   ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.dependencies ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.tenants  FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.counters FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.id_ranges FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.todos    FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.events   FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.dependencies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON todo.tenants
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.counters
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.id_ranges
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.todos
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.events
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.dependencies
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());

-- Privileges: nothing on the tables for PUBLIC; todo.grant_usage(role) grants what an
-- agent-facing role needs. Tenants are registered by an administrator.
REVOKE ALL ON ALL TABLES IN SCHEMA todo FROM PUBLIC;
GRANT USAGE ON SCHEMA todo TO PUBLIC;

CREATE FUNCTION todo.grant_usage(role regrole) RETURNS void
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
    EXECUTE format('GRANT SELECT ON todo.needs_attention TO %s', role);
    EXECUTE format('GRANT EXECUTE ON FUNCTION todo.authenticate(text) TO %s', role);
END
$fn$;
COMMENT ON FUNCTION todo.grant_usage(regrole) IS
    'Grants a role what it needs to use pg_todos as an agent-facing app role (row-level security still applies).';
REVOKE EXECUTE ON FUNCTION todo.grant_usage(regrole) FROM PUBLIC;

-- User data survives pg_dump / restore.
SELECT pg_catalog.pg_extension_config_dump('todo.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('todo.counters', '');
SELECT pg_catalog.pg_extension_config_dump('todo.id_ranges', '');
SELECT pg_catalog.pg_extension_config_dump('todo.todos', '');
SELECT pg_catalog.pg_extension_config_dump('todo.events', '');
SELECT pg_catalog.pg_extension_config_dump('todo.dependencies', '');
