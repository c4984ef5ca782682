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
-- Written only by the extension's own statements (src/store/ids.rs), which keep
-- 0 < next_id <= last_id + 1; no CHECK constraint, which PostgreSQL would parse again on
-- every id taken.
CREATE TABLE todo.id_ranges (
    tenant_id text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
    slot      integer NOT NULL,
    next_id   bigint NOT NULL,
    last_id   bigint NOT NULL,
    PRIMARY KEY (tenant_id, slot)
);
COMMENT ON TABLE todo.id_ranges IS 'Per-tenant runs of todo ids still to hand out (next_id through last_id); written by the extension.';

-- The rules every row obeys (a positive id, a subject with text, a known status and
-- priority, completed_at exactly on finished todos, a claim only on an in_progress todo, …)
-- are not CHECK constraints: the before-write trigger checks them once per row in compiled
-- code (core/src/row_checks.rs) and refuses a row as the constraint did (23514, the
-- constraint's name), for plain SQL as for the extension's functions. PostgreSQL would
-- re-read eleven constraint expressions from their stored text for every statement.
CREATE TABLE todo.todos (
    tenant_id           text NOT NULL DEFAULT todo.current_tenant()
                        REFERENCES todo.tenants ON DELETE CASCADE,
    id                  bigint NOT NULL,
    conversation_id     text DEFAULT todo.current_conversation(),
    turn_id             text DEFAULT todo.current_turn(),
    agent_id            text DEFAULT todo.current_agent(),
    subject             text NOT NULL,
    description         text,
    active_form         text,
    status              text NOT NULL DEFAULT 'pending',
    priority            text,
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
    metadata            jsonb,
    external_id         text,
    archived_at         timestamptz,
    labels              text[],
    issue_type          text,
    due_at              timestamptz,
    notes               text,
    plan                text,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT todos_parent_fkey FOREIGN KEY (tenant_id, parent_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE SET NULL (parent_id)
);
-- Room on each page for a new version of its rows, so that an update that changes no indexed
-- column (a lease renewal, todo.heartbeat) can be a HOT update: no new index entries.
ALTER TABLE todo.todos SET (fillfactor = 80);
COMMENT ON TABLE todo.todos IS 'Agent todos. conversation_id NULL = tenant-wide. Ids are small integers, unique per tenant.';
COMMENT ON COLUMN todo.todos.conversation_id IS 'NULL: tenant-wide, visible from every conversation of the tenant.';
COMMENT ON COLUMN todo.todos.position IS 'Append-order within the list (the id, unless set); ties broken by id.';
COMMENT ON COLUMN todo.todos.version IS 'Bumped by every UPDATE; (tenant_id, id, version) keys todo.events.';
COMMENT ON COLUMN todo.todos.parent_id IS 'The todo this one is a subtask of (same tenant); NULL when the parent is deleted.';
COMMENT ON COLUMN todo.todos.claimed_by IS 'The agent holding a claim on this in_progress todo (with lease_expires_at); NULL: unclaimed.';
COMMENT ON COLUMN todo.todos.lease_expires_at IS 'When the claim lapses unless renewed (todo.heartbeat); after it the todo is claimable again.';
COMMENT ON COLUMN todo.todos.fence IS 'Fencing number: bumped by every claim; an action that presents an older one is rejected.';
COMMENT ON COLUMN todo.todos.status IS 'pending, in_progress, completed, canceled; or blocked (waiting on something outside the list), deferred (put off for later), review (done, waiting for a review): open, never claimed or ready.';
COMMENT ON COLUMN todo.todos.owner IS 'Who the todo is assigned to (Claude Code''s task owner); an assignment, not a claim.';
COMMENT ON COLUMN todo.todos.metadata IS 'The caller''s own key/values (a JSON object; Claude Code''s task metadata, merged key by key).';
COMMENT ON COLUMN todo.todos.external_id IS 'The caller''s own id for the todo, unique within its conversation (Cursor''s todo_write ids).';
COMMENT ON COLUMN todo.todos.labels IS 'Its labels (beads'', Backlog.md''s), in the order given; NULL: none. At most todo.max_metadata_size bytes.';
COMMENT ON COLUMN todo.todos.issue_type IS 'What kind of work it is (beads'' and Backlog.md''s issue type: bug, feature, task, epic, chore, …); NULL: not said.';
COMMENT ON COLUMN todo.todos.due_at IS 'When it is due (Backlog.md''s due date); NULL: no date.';
COMMENT ON COLUMN todo.todos.notes IS 'Notes kept while working on it (beads'' notes, Backlog.md''s implementation notes).';
COMMENT ON COLUMN todo.todos.plan IS 'How it is to be done (beads'' design, Backlog.md''s implementation plan, Task Master''s details).';
COMMENT ON COLUMN todo.todos.archived_at IS 'When a whole-list writer left this finished todo off its list: kept as history, on no tool''s list; cleared by a reopen.';

-- The per-conversation list and the tenant-wide browse (seed 000).
CREATE INDEX todos_conversation_list ON todo.todos (tenant_id, conversation_id, status, position);
CREATE INDEX todos_tenant_browse ON todo.todos (tenant_id, status, updated_at DESC);
-- The pending todos of each list (and of the tenant-wide pool, conversation_id NULL) in claim
-- order: priority (high, medium or unset, low), position, id. A claim and todo.ready() read
-- the list's and the pool's as two index scans merged, so their cost does not grow with the
-- list (src/store/read.rs, first_ready).
CREATE INDEX todos_claim_order ON todo.todos
    (tenant_id, conversation_id, (CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END), position, id)
    WHERE status = 'pending';
COMMENT ON INDEX todo.todos_claim_order IS 'The pending todos of each list in claim order (priority, position, id): what todo.claim() and todo.ready() read.';
-- The claims of each list (in progress, claimed): where a claim looks for one whose lease ran
-- out. Not on lease_expires_at, which a renewal changes: a renewal stays a HOT update.
CREATE INDEX todos_claims ON todo.todos (tenant_id, conversation_id)
    WHERE status = 'in_progress' AND claimed_by IS NOT NULL;
COMMENT ON INDEX todo.todos_claims IS 'The claimed in-progress todos of each list: where todo.claim() and todo.ready() look for a lapsed lease.';
-- The open todos of each list (and of the pool, conversation_id NULL), in position order: what
-- every list read of open todos (the open block, the preamble, the writ's list, the dialects'
-- reads) scans, one probe for the list and one for the pool, whatever the number of open
-- statuses. Finished todos, most of a long-lived list, are not in it.
CREATE INDEX todos_open ON todo.todos (tenant_id, conversation_id, position, id)
    WHERE status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review');
COMMENT ON INDEX todo.todos_open IS 'The open todos (pending, in progress, blocked, deferred, review) of each list in position order: what the reads of open todos scan.';
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
    PRIMARY KEY (tenant_id, todo_id, kind, position),
    CONSTRAINT checklist_items_todo_fkey FOREIGN KEY (tenant_id, todo_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE todo.checklist_items IS 'A todo''s checkable lists: its acceptance criteria and its definition of done (Backlog.md''s), item by item, in order.';

CREATE TABLE todo.comments (
    tenant_id  text NOT NULL DEFAULT todo.current_tenant(),
    todo_id    bigint NOT NULL,
    position   integer NOT NULL CONSTRAINT comments_position_check CHECK (position BETWEEN 1 AND 1000),
    author     text CONSTRAINT comments_author_check CHECK (octet_length(author) <= 200),
    body       text NOT NULL CONSTRAINT comments_body_check CHECK (btrim(body) <> '' AND octet_length(body) <= 10000),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, todo_id, position),
    CONSTRAINT comments_todo_fkey FOREIGN KEY (tenant_id, todo_id)
        REFERENCES todo.todos (tenant_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE todo.comments IS 'Comments on a todo, with their author, in the order they were written (Backlog.md''s).';

-- Lock rows: a writer locks its tenant's row (FOR UPDATE) to serialize whole-list replaces
-- of one list ('list:<conversation>') and changes to the dependency graph ('dependencies').
-- Row locks, not advisory locks: only the extension's owner reads this table, so no role can
-- hold another tenant's lock (src/store/locks.rs).
CREATE TABLE todo.locks (
    tenant_id       text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
    name            text NOT NULL,
    checklist       jsonb CONSTRAINT locks_checklist_check CHECK (jsonb_typeof(checklist) = 'array'),
    written_in_turn text,
    properties      jsonb CONSTRAINT locks_properties_check CHECK (jsonb_typeof(properties) = 'object'),
    PRIMARY KEY (tenant_id, name)
);
COMMENT ON TABLE todo.locks IS 'Per-tenant lock rows (whole-list replaces of a list, the dependency graph), locked FOR UPDATE by the extension; a list''s row also keeps what belongs to the list rather than to a todo. No role but the owner reads it.';

-- The trackers' numbering (src/store/numbers.rs): per list and series of caller ids (Task
-- Master's `5`, its subtasks' `5.`, Backlog.md's `TASK-`), the last number handed out. A
-- create locks its row with INSERT … ON CONFLICT DO UPDATE, so the creators of one series of
-- one list wait for each other there (and for no one else) and never take the same number.
-- Written only by the extension.
CREATE TABLE todo.caller_numbers (
    tenant_id       text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
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

-- Waiting claims (src/store/waits.rs): a claim of the next ready todo (or of one todo) that
-- keeps trying for up to its wait, which MCP answers as a task (the Tasks extension): made by
-- todo.claim_wait before the reply, tried again by each todo.claim_wait_get (so a service
-- restart loses nothing and no worker is needed), ended by a claim, the deadline or
-- todo.claim_wait_cancel. Kept an hour after it ends (todo.claim_wait removes older ones of
-- its tenant). Written only by the extension.
CREATE TABLE todo.claim_waits (
    tenant_id       text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
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

-- This installation's secret key for the change hints' channel names (todo.notify = hint,
-- src/store/channel.rs): a channel is HMAC-SHA-256(key, tenant id), so no one can derive
-- another tenant's. One row, made here from two random UUIDs (244 random bits). Not dumped:
-- a restored database makes its own, and listeners ask todo.channel() again. Row-level
-- security on with no policy and no grant: no role but the owner reads it.
CREATE TABLE todo.channel_key (
    key bytea NOT NULL CONSTRAINT channel_key_key_check CHECK (length(key) >= 16)
);
COMMENT ON TABLE todo.channel_key IS 'This installation''s secret key for the names of the change hints'' channels (todo.channel()); one row, read only by the extension''s owner.';
COMMENT ON COLUMN todo.channel_key.key IS 'At least 16 random bytes; the HMAC key of every tenant''s channel name.';
INSERT INTO todo.channel_key (key)
VALUES (decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'));
ALTER TABLE todo.channel_key ENABLE ROW LEVEL SECURITY;

-- Roles granted by todo.grant_usage: whether each may use plain SQL on todo.todos (an app)
-- or only the functions (an agent), and the tenant it is bound to (NULL: any tenant, for a
-- service that takes the tenant from elsewhere, such as pg_todos serve's tokens). No foreign
-- key to todo.tenants: deleting a tenant must not unbind its roles (they then act for no one).
-- Not tenant-keyed (with Citus, a reference table). Only the owner reads it.
CREATE TABLE todo.roles (
    role       regrole PRIMARY KEY,
    tenant_id  text CONSTRAINT roles_tenant_id_check CHECK (tenant_id <> ''),
    plain_sql  boolean NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE todo.roles IS 'Roles granted by todo.grant_usage: bound to one tenant or not, plain SQL or functions only. Changed only through todo.grant_usage and todo.revoke_usage.';

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
CREATE INDEX events_tenant_xact ON todo.events (tenant_id, xact);

-- The trigger functions are no one's API: they live in the extension's private schema,
-- todo_internal (the split of pg_graphql's graphql and graphql_public schemas). No role but
-- the owner has USAGE on it or EXECUTE on them: PostgreSQL checks neither when a trigger
-- fires, so every writer of the tables runs them all the same. Their code is Rust
-- (src/triggers/, one file each, #[pg_trigger(sql = false)]: created here, beside their triggers).
CREATE SCHEMA todo_internal;
COMMENT ON SCHEMA todo_internal IS
    'pg_todos'' private schema: its trigger functions, which are not API (schema todo is). No role but the extension''s owner may use it.';
REVOKE ALL ON SCHEMA todo_internal FROM PUBLIC;

-- The row trigger of todo.todos before a write: ids, the lifecycle, the claim guard, stamps.
CREATE FUNCTION todo_internal.todos_before_write() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'todos_before_write_wrapper';
COMMENT ON FUNCTION todo_internal.todos_before_write() IS
    'Row trigger of todo.todos (BEFORE INSERT OR UPDATE): allocates the id, enforces the lifecycle (55000), the claim guard (55000, 55006) and the row rules that were CHECK constraints (23514, the constraint''s name), stamps started_at, completed_at and updated_at, bumps version.';
-- The event log, written AFTER each row change (so it records what was really stored).
CREATE FUNCTION todo_internal.todos_log_event() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'todos_log_event_wrapper';
COMMENT ON FUNCTION todo_internal.todos_log_event() IS
    'Row trigger of todo.todos (AFTER INSERT, UPDATE, DELETE): appends the change to todo.events (and, with todo.notify = hint, hints the tenant''s channel for plain-SQL writes).';
CREATE TRIGGER todos_before_write BEFORE INSERT OR UPDATE ON todo.todos
    FOR EACH ROW EXECUTE FUNCTION todo_internal.todos_before_write();
CREATE TRIGGER todos_log_event AFTER INSERT OR UPDATE OR DELETE ON todo.todos
    FOR EACH ROW EXECUTE FUNCTION todo_internal.todos_log_event();

-- Backends remember which tenants are registered; any change to todo.tenants makes them
-- forget (src/store/ids.rs).
CREATE FUNCTION todo_internal.tenants_changed() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'tenants_changed_wrapper';
COMMENT ON FUNCTION todo_internal.tenants_changed() IS
    'Trigger of todo.tenants: forgets the backend''s cache of registered tenants when the table changes.';
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants
    FOR EACH STATEMENT EXECUTE FUNCTION todo_internal.tenants_changed();

-- Backends remember which roles are bound to a tenant; any change to todo.roles makes them
-- forget (src/store/roles.rs).
CREATE FUNCTION todo_internal.roles_changed() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'roles_changed_wrapper';
COMMENT ON FUNCTION todo_internal.roles_changed() IS
    'Trigger on todo.roles: tells every backend to forget the tenant bindings it remembered.';
CREATE TRIGGER roles_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.roles
    FOR EACH STATEMENT EXECUTE FUNCTION todo_internal.roles_changed();

-- The dependency graph stays acyclic whoever writes it (see the function's comment in
-- src/triggers/dependencies.rs).
CREATE FUNCTION todo_internal.dependencies_before_insert() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'dependencies_before_insert_wrapper';
COMMENT ON FUNCTION todo_internal.dependencies_before_insert() IS
    'Row trigger of todo.dependencies (BEFORE INSERT): under the tenant''s dependency lock, refuses an edge that would close a cycle through dependencies or subtasks (22023); under REPEATABLE READ it refuses (0A000).';
CREATE TRIGGER dependencies_before_insert BEFORE INSERT ON todo.dependencies
    FOR EACH ROW EXECUTE FUNCTION todo_internal.dependencies_before_insert();

-- Row-level security: ENABLE and FORCE everywhere; one policy per table, keyed on the tenant
-- in context. todo.current_tenant() raises 22023 when todo.tenant is unset, empty or blank,
-- so a role subject to RLS gets an error, never "all tenants" and never a silent no-op.
ALTER TABLE todo.tenants  ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.counters ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.id_ranges ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.todos    ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.events   ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.dependencies ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.checklist_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.comments ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.locks    ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.caller_numbers ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.claim_waits ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.roles    ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.tenants  FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.counters FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.id_ranges FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.todos    FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.events   FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.dependencies FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.checklist_items FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.comments FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.locks    FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.caller_numbers FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.claim_waits FORCE ROW LEVEL SECURITY;
ALTER TABLE todo.roles    FORCE ROW LEVEL SECURITY;
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
CREATE POLICY tenant_isolation ON todo.checklist_items
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.comments
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.locks
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.caller_numbers
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
CREATE POLICY tenant_isolation ON todo.claim_waits
    USING (tenant_id = todo.current_tenant())
    WITH CHECK (tenant_id = todo.current_tenant());
-- todo.roles has no policy: no role under row-level security sees a row.

-- Privileges: nothing on the tables for PUBLIC, and (sql/privileges.sql, run last) no
-- function but the four that read the context; todo.grant_usage grants a role what it needs.
-- Tenants are registered by an administrator.
REVOKE ALL ON ALL TABLES IN SCHEMA todo FROM PUBLIC;
GRANT USAGE ON SCHEMA todo TO PUBLIC;

-- todo.grant_usage grants the functions of schema todo only: the trigger functions (schema
-- todo_internal) need no grant, as PostgreSQL checks no privilege when a trigger fires.
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
REVOKE EXECUTE ON FUNCTION todo.grant_usage(regrole, text, boolean) FROM PUBLIC;

CREATE FUNCTION todo.revoke_usage(role regrole) RETURNS boolean
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
COMMENT ON FUNCTION todo.revoke_usage(regrole) IS
    'Takes back everything todo.grant_usage gave a role (its tables, its functions, its tenant binding); true when it was granted. Errors: 22004 a NULL role.';
REVOKE EXECUTE ON FUNCTION todo.revoke_usage(regrole) FROM PUBLIC;

-- User data survives pg_dump / restore.
SELECT pg_catalog.pg_extension_config_dump('todo.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('todo.counters', '');
SELECT pg_catalog.pg_extension_config_dump('todo.id_ranges', '');
SELECT pg_catalog.pg_extension_config_dump('todo.todos', '');
SELECT pg_catalog.pg_extension_config_dump('todo.events', '');
SELECT pg_catalog.pg_extension_config_dump('todo.dependencies', '');
SELECT pg_catalog.pg_extension_config_dump('todo.checklist_items', '');
SELECT pg_catalog.pg_extension_config_dump('todo.comments', '');
SELECT pg_catalog.pg_extension_config_dump('todo.locks', '');
SELECT pg_catalog.pg_extension_config_dump('todo.caller_numbers', '');
SELECT pg_catalog.pg_extension_config_dump('todo.claim_waits', '');
SELECT pg_catalog.pg_extension_config_dump('todo.roles', '');
