-- pg_todos 0.9.1 -> 0.10.0: many tenants at once. No NOTIFY in the write path (todo.notify =
-- off | hint; a hint carries nothing, on a channel keyed with this installation's secret), a
-- change feed followed by polling the log (todo.changed_tenants), claims whose cost does not
-- grow with the list (todos_claim_order), and lease renewals that can be HOT updates.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.10.0'" to load this file. \quit

-- Claims and todo.ready() read the pending todos in claim order from an index; room for HOT
-- updates (a lease renewal no longer changes updated_at; the fillfactor applies to pages
-- written from now on: VACUUM FULL or pg_repack applies it to the whole table). Each command
-- is run by EXECUTE, alone: on a distributed store Citus sends a command to the shards as its
-- statement's text, and the statement of a command of an extension script is the whole script
-- (its workers refuse it: "cannot insert multiple commands into a prepared statement"); IF NOT
-- EXISTS, as Citus sends them to workers that have run this script already.
DO $update$
BEGIN
    EXECUTE $$CREATE INDEX IF NOT EXISTS todos_claim_order ON todo.todos
        (tenant_id, conversation_id, (CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END), position, id)
        WHERE status = 'pending'$$;
    EXECUTE $$COMMENT ON INDEX todo.todos_claim_order IS 'The pending todos of each list in claim order (priority, position, id): what todo.claim() and todo.ready() read.'$$;
    EXECUTE $$CREATE INDEX IF NOT EXISTS todos_claims ON todo.todos (tenant_id, conversation_id)
        WHERE status = 'in_progress' AND claimed_by IS NOT NULL$$;
    EXECUTE $$COMMENT ON INDEX todo.todos_claims IS 'The claimed in-progress todos of each list: where todo.claim() and todo.ready() look for a lapsed lease.'$$;
    EXECUTE $$ALTER TABLE todo.todos SET (fillfactor = 80)$$;
    EXECUTE $$COMMENT ON COLUMN todo.todos.updated_at IS 'When the todo last changed (set by the row trigger). A lease renewal (todo.heartbeat) is not a change: it keeps updated_at, so it can be a HOT update.'$$;
END
$update$;

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
REVOKE ALL ON todo.channel_key FROM PUBLIC;

-- A live claim is not idle: no_heartbeat is for in-progress todos with no claim.
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
    'Todos that need a person: reason lease_lapsed (a claim whose lease ran out), no_heartbeat (in progress with no claim, unchanged for todo.attention_idle; a live claim is not idle, its lease says how long its holder may go without a heartbeat), blocked (blocked or waiting on open todos for todo.attention_blocked); since when and for how many seconds.';

COMMENT ON FUNCTION todo.channel() IS
    'The LISTEN channel of the context''s tenant''s change hints: todo_ and 40 hex digits of an HMAC of the tenant id under this installation''s secret key, so only a role acting for the tenant learns it. Hints are sent only with todo.notify = hint: an empty payload, at commit, at most one per tenant per 100 ms per backend; read what changed with todo.changes_since. Errors: 22023 no tenant in context, 42501 a role bound to another tenant.';
COMMENT ON FUNCTION todo.todos_log_event() IS
    'Row trigger of todo.todos (AFTER INSERT, UPDATE, DELETE): appends the change to todo.events (and, with todo.notify = hint, hints the tenant''s channel for plain-SQL writes).';

-- What pg_todos serve asks once per tick for every tenant it streams.
CREATE FUNCTION todo."changed_tenants"(
	"tenants" TEXT[], /* Vec < Option < String > > */
	"cursors" TEXT[] /* Vec < Option < String > > */
) RETURNS TEXT[] /* Vec < String > */
STRICT STABLE SECURITY DEFINER PARALLEL RESTRICTED
SET search_path TO pg_catalog, todo, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'changed_tenants_wrapper';
ALTER FUNCTION todo.changed_tenants(text[], text[]) SET todo.tenant = '';
COMMENT ON FUNCTION todo.changed_tenants(text[], text[]) IS
    'Which of the tenants have changes their cursor (same position; one todo.changes_since returned) did not see: one statement per tick for a service following the log (pg_todos serve). Each is asked acting for it (a bound role only about its own). Errors: 22023 arrays of different lengths or a NULL, 54000 past 10,000 tenants, 22P02 a malformed cursor, 42501 a tenant the role may not act for.';

REVOKE EXECUTE ON FUNCTION todo.changed_tenants(text[], text[]) FROM PUBLIC;

-- The roles granted so far get the new function.
SELECT todo.grant_usage(r.role, r.tenant_id, r.plain_sql) FROM todo.roles r ORDER BY r.role::oid;
