-- What the HTTP service (`pg_todos serve`) and the people watching need: bearer tokens, the
-- "needs attention" rows, and the board's data. The service only calls these; it holds no
-- rule of its own.

-- Bearer tokens of the HTTP service. Each belongs to one tenant; only its SHA-256 is stored
-- (the secret is shown once, by todo.create_token). Not tenant-keyed, unlike every other
-- table: a request is looked up by its token before its tenant is known (with Citus, a
-- reference table). No role but the owner reads it: todo.authenticate answers for it.
-- Row-level security is on with no policy: a role given SELECT by mistake still sees nothing.
CREATE TABLE todo.tokens (
    token_id    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id   text NOT NULL REFERENCES todo.tenants ON DELETE CASCADE,
    label       text NOT NULL CONSTRAINT tokens_label_check CHECK (btrim(label) <> ''),
    secret_hash bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    person      boolean NOT NULL DEFAULT false,
    default_list text,
    expires_at  timestamptz
);
COMMENT ON TABLE todo.tokens IS 'Bearer tokens of the HTTP service: one tenant each, stored as a SHA-256 hash; todo.create_token makes one, todo.revoke_token ends it.';
COMMENT ON COLUMN todo.tokens.label IS 'Who or what the token is for; the actor recorded for its writes (person:<label> from the board).';
COMMENT ON COLUMN todo.tokens.secret_hash IS 'sha256 of the token''s text; the token itself is never stored.';
COMMENT ON COLUMN todo.tokens.revoked_at IS 'When todo.revoke_token ended it; a revoked token authenticates nothing.';
COMMENT ON COLUMN todo.tokens.default_list IS 'The list (conversation) the token''s requests work on when they name none: its MCP calls (/mcp, unless ?list= names one) and its REST calls (/v1/todos); NULL: the tenant-wide pool.';
COMMENT ON COLUMN todo.tokens.expires_at IS 'When it stops authenticating (todo.create_token(..., expires_in => ...)); NULL: never.';
COMMENT ON COLUMN todo.tokens.person IS 'true: made for a person (the board); only such a token may send X-Actor: person and be recorded as person:<label>.';
CREATE INDEX tokens_tenant ON todo.tokens (tenant_id);
REVOKE ALL ON todo.tokens FROM PUBLIC;
ALTER TABLE todo.tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE todo.tokens FORCE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('todo.tokens', '');

CREATE FUNCTION todo.create_token(tenant text, label text, person boolean DEFAULT false, default_list text DEFAULT NULL,
                                  expires_in interval DEFAULT NULL)
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
    IF create_token.expires_in IS NOT NULL AND now() + create_token.expires_in <= now() THEN
        RAISE EXCEPTION 'todo.create_token: expires_in must be a positive interval, not %', create_token.expires_in
            USING ERRCODE = '22023', HINT = 'e.g. expires_in => ''90 days'', or NULL (the default) for a token that does not expire.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM todo.tenants t WHERE t.tenant_id = create_token.tenant) THEN
        RAISE EXCEPTION 'todo.create_token: tenant "%" is not registered', create_token.tenant
            USING ERRCODE = '42704', HINT = 'INSERT INTO todo.tenants (tenant_id) VALUES (...) first.';
    END IF;
    INSERT INTO todo.tokens AS k (tenant_id, label, secret_hash, person, default_list, expires_at)
    VALUES (create_token.tenant, create_token.label, sha256(convert_to(secret, 'UTF8')), create_token.person,
            create_token.default_list, now() + create_token.expires_in)
    RETURNING k.token_id INTO create_token.token_id;
    token := secret;
    RETURN NEXT;
END
$fn$;
COMMENT ON FUNCTION todo.create_token(text, text, boolean, text, interval) IS
    'Creates a bearer token of the HTTP service for a tenant; returns its id and its secret, shown only this once (only a hash is stored). person => true: a token for a person (the board), the only kind that may act as person:<label> (X-Actor: person); false (the default): an agent''s. default_list: the list (conversation) its requests work on when they name none: its MCP calls (/mcp, unless ?list= names one) and its REST calls (/v1/todos); NULL: the tenant-wide pool. expires_in: how long it authenticates (NULL, the default: until revoked). Errors: 22023 blank label or default list, or an expires_in not above zero; 22004 person NULL; 42704 unknown tenant.';
REVOKE EXECUTE ON FUNCTION todo.create_token(text, text, boolean, text, interval) FROM PUBLIC;

CREATE FUNCTION todo.revoke_token(token_id uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
BEGIN
    UPDATE todo.tokens k SET revoked_at = now()
     WHERE k.token_id = revoke_token.token_id AND k.revoked_at IS NULL;
    RETURN FOUND;
END
$fn$;
COMMENT ON FUNCTION todo.revoke_token(uuid) IS
    'Revokes a bearer token at once (its next request gets 401); true when it was active, false when unknown or already revoked. Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.revoke_token(uuid) FROM PUBLIC;

CREATE FUNCTION todo.authenticate(token text) RETURNS TABLE (tenant_id text, label text, person boolean, default_list text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    SELECT k.tenant_id, k.label, k.person, k.default_list FROM todo.tokens k
     WHERE k.secret_hash = pg_catalog.sha256(pg_catalog.convert_to(authenticate.token, 'UTF8'))
       AND k.revoked_at IS NULL
       AND (k.expires_at IS NULL OR k.expires_at > pg_catalog.now())
$fn$;
COMMENT ON FUNCTION todo.authenticate(text) IS
    'The tenant, label and default list of an active bearer token, and whether it was made for a person; no row for an unknown, malformed, revoked or expired one (todo.token_refusal says which). For the HTTP service (todo.grant_usage grants it). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.authenticate(text) FROM PUBLIC;

-- Why a token does not authenticate, for the service's 401 answer (RFC 6750's
-- error_description): called only after todo.authenticate found no row, so the lookup of
-- every request stays one indexed read. It tells nothing a caller holding the token does not
-- already have a right to know: that token's own state.
CREATE FUNCTION todo.token_refusal(token text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
    SELECT CASE WHEN k.secret_hash IS NULL THEN 'unknown'
                WHEN k.revoked_at IS NOT NULL THEN 'revoked'
                WHEN k.expires_at <= pg_catalog.now() THEN 'expired'
           END
      FROM (SELECT 1) one
      LEFT JOIN todo.tokens k
        ON k.secret_hash = pg_catalog.sha256(pg_catalog.convert_to(token_refusal.token, 'UTF8'))
$fn$;
COMMENT ON FUNCTION todo.token_refusal(text) IS
    'Why a bearer token does not authenticate: unknown (no such token: mistyped, cut short, of another database, or its tenant deleted), revoked (todo.revoke_token), expired (its expires_in ran out); NULL when it authenticates. For the HTTP service''s 401 answer (todo.grant_usage grants it). Raises nothing.';
REVOKE EXECUTE ON FUNCTION todo.token_refusal(text) FROM PUBLIC;

-- Todos a person should look at, for the board, psql and dashboards (Grafana reads it as a
-- table). With security_invoker, an app role sees its tenant's rows (row-level security); an
-- administrator sees every tenant's. Thresholds: the settings todo.attention_idle (15min)
-- and todo.attention_blocked (1h).
CREATE VIEW todo.needs_attention WITH (security_invoker = true) AS
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
COMMENT ON VIEW todo.needs_attention IS
    'Todos that need a person: reason lease_lapsed (a claim whose lease ran out), no_heartbeat (in progress with no claim, unchanged for todo.attention_idle; a live claim is not idle, its lease says how long its holder may go without a heartbeat), blocked (blocked or waiting on open todos for todo.attention_blocked); since when and for how many seconds.';
COMMENT ON COLUMN todo.needs_attention.reason IS 'lease_lapsed, no_heartbeat or blocked.';
COMMENT ON COLUMN todo.needs_attention.since IS 'When the lease ran out, or the todo last changed.';

CREATE FUNCTION todo.board(per_list integer DEFAULT 200) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
-- PL/pgSQL with the tenant in a variable: each statement names one tenant, so Citus sends it
-- to the tenant's worker. Bounded, however large the tenant: at most max_conversations
-- conversations, per_list todos of each (each with at most max_blockers of the open todos
-- it waits for) and max_attention attention rows are built, with
-- counts of what was left out; the conversations are chosen from one aggregate over the
-- tenant's live todos (no JSON is built for the others). A list with more todos says where
-- its next page starts (todo.board_page's after); the cursor, taken first, is where
-- todo.board_changes starts.
DECLARE
    tenant text := todo.current_tenant();
    max_conversations constant integer := 50;
    max_todos constant integer := 200;
    max_attention constant integer := 200;
    max_blockers constant integer := 50;
    feed_cursor text;
BEGIN
IF per_list IS NULL OR per_list NOT BETWEEN 1 AND max_todos THEN
    RAISE EXCEPTION 'todo.board: per_list must be from 1 to %, not %', max_todos, coalesce(per_list::text, 'NULL')
        USING ERRCODE = '22023', HINT = 'Pass how many todos of each list to read; todo.board_page reads the rest.';
END IF;
feed_cursor := todo.changed_lists(NULL)->>'cursor';
RETURN (WITH groups AS (
    SELECT t.conversation_id, max(t.updated_at) AS active, count(*) AS total
      FROM todo.todos t
     WHERE t.tenant_id = tenant AND t.archived_at IS NULL
     GROUP BY t.conversation_id
    UNION ALL
    -- lists made on the board (todo.board_act's create_list) that hold no todo yet
    SELECT substr(l.name, 6), (l.properties->'board'->>'at')::timestamptz, 0
      FROM todo.locks l
     WHERE l.tenant_id = tenant AND starts_with(l.name, 'list:') AND l.properties ? 'board'
       AND NOT EXISTS (SELECT 1 FROM todo.todos e
                        WHERE e.tenant_id = tenant AND e.conversation_id = substr(l.name, 6) AND e.archived_at IS NULL)
), chosen AS (
    SELECT g.conversation_id, g.active, g.total, count(*) OVER () AS all_groups,
           row_number() OVER (ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id) AS rank
      FROM groups g
     ORDER BY g.conversation_id IS NOT NULL, g.active DESC, g.conversation_id
     LIMIT max_conversations
), shown AS (
    SELECT c.rank, t.*,
           (SELECT coalesce(jsonb_agg(o.depends_on ORDER BY o.depends_on), '[]')
              FROM (SELECT d.depends_on FROM todo.dependencies d
                      JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                     WHERE d.tenant_id = tenant AND d.todo_id = t.id
                       AND b.status NOT IN ('completed', 'canceled')
                     ORDER BY d.depends_on LIMIT max_blockers) o) AS blocked_by,
           (SELECT jsonb_build_object('done', count(*) FILTER (WHERE s.status = 'completed'), 'total', count(*))
              FROM todo.todos s
             WHERE s.tenant_id = tenant AND s.parent_id = t.id
               AND s.status <> 'canceled' AND s.archived_at IS NULL
            HAVING count(*) > 0) AS subtasks,
           -- who changed it last: its newest event's agent (one probe of the events' key)
           (SELECT e.agent_id FROM todo.events e
             WHERE e.tenant_id = tenant AND e.todo_id = t.id
             ORDER BY e.version DESC LIMIT 1) AS updated_by
      FROM chosen c
      CROSS JOIN LATERAL (
          SELECT x.* FROM todo.todos x
           WHERE x.tenant_id = tenant AND x.archived_at IS NULL
             AND (x.conversation_id = c.conversation_id OR (c.conversation_id IS NULL AND x.conversation_id IS NULL))
           ORDER BY x.position, x.id
           LIMIT per_list) t
), lists AS (
    SELECT rank,
           jsonb_agg(jsonb_build_object(
               'id', id, 'subject', subject, 'active_form', active_form, 'status', status,
               'priority', priority, 'owner', owner, 'agent_id', agent_id, 'claimed_by', claimed_by,
               'lease_expires_at', lease_expires_at,
               'lease_seconds_left', CASE WHEN claimed_by IS NOT NULL
                   THEN greatest(0, ceil(extract(epoch FROM lease_expires_at - now())))::bigint END,
               'fence', fence, 'version', version,
               'blocked_by', blocked_by, 'parent_id', parent_id, 'subtasks', subtasks,
               'updated_at', updated_at, 'updated_by', updated_by, 'position', position,
               'labels', labels, 'due_at', due_at)
               ORDER BY position, id) AS todos,
           count(*) AS n,
           (array_agg(position::text || ':' || id ORDER BY position DESC, id DESC))[1] AS last
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
    'cursor', feed_cursor,
    'conversations', coalesce((SELECT jsonb_agg(jsonb_build_object('conversation_id', c.conversation_id,
                                                                   'todos', coalesce(l.todos, '[]'),
                                                                   'todos_omitted', c.total - coalesce(l.n, 0),
                                                                   'next', CASE WHEN c.total > coalesce(l.n, 0) THEN l.last END)
                                                ORDER BY c.rank)
                                 FROM chosen c LEFT JOIN lists l ON l.rank = c.rank), '[]'),
    'conversations_omitted', coalesce((SELECT max(c.all_groups) - count(*) FROM chosen c), 0),
    'attention', coalesce((SELECT jsonb_agg(to_jsonb(a) - 'tenant_id' - 'all_rows' ORDER BY a.since, a.todo_id)
                             FROM attention a), '[]'),
    'attention_omitted', coalesce((SELECT max(a.all_rows) - count(*) FROM attention a), 0),
    'limits', jsonb_build_object('conversations', max_conversations, 'todos', per_list,
                                 'attention', max_attention, 'blocked_by', max_blockers)));
END
$fn$;
COMMENT ON FUNCTION todo.board(integer) IS
    'The board of the tenant in context, bounded: {"tenant", "now", "cursor" (where todo.board_changes starts), "conversations": [{"conversation_id", "todos" (each with its version, fence, position, and who changed it last, "updated_by"), "todos_omitted", "next" (where todo.board_page reads on, null when nothing was left out)}] (the tenant-wide pool first, then the most recently active, a list made on the board with no todo yet among them; at most 50 conversations of at most per_list (1 to 200, default 200) todos each, in list order, each todo with at most 50 of the open todos it is blocked by), "conversations_omitted", "attention": the needs_attention rows (at most 200, the oldest first), "attention_omitted", "limits": {"conversations": 50, "todos": per_list, "attention": 200, "blocked_by": 50}}; the *_omitted counts say what was left out. Errors: 22023 when no tenant is in context, or per_list is not from 1 to 200.';

-- Per tenant, what an operator watches: todos by status, claims and lapsed leases, the open
-- todo unchanged the longest, and the events of the last hour. It runs as its caller, so
-- row-level security decides what it sees: an administrator (a superuser, BYPASSRLS) every
-- tenant, an app's role its own (the tenant in context), a role that may not read the
-- tables 42501. PL/pgSQL, a tenant at a time: each statement names one tenant (so Citus sends
-- it to the tenant's worker) and reads an index, never the tenant's whole history: the counts
-- by status read todos_tenant_browse (an index-only scan when the table is vacuumed), the
-- claims todos_claims, the oldest open todo one entry of todos_tenant_browse per open status,
-- and the events of the hour events_tenant_xact: the first transaction of the hour is found
-- by bisecting the tenant's transaction ids (about 40 probes at most), then the events from
-- it are counted, at most max_events of them.
CREATE FUNCTION todo.stats(tenant text DEFAULT NULL) RETURNS TABLE (
    tenant_id              text,
    pending                bigint,
    in_progress            bigint,
    blocked                bigint,
    deferred               bigint,
    review                 bigint,
    completed              bigint,
    canceled               bigint,
    open_claims            bigint,
    lapsed_leases          bigint,
    oldest_open_id         bigint,
    oldest_open_updated_at timestamptz,
    events_last_hour       bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, todo, pg_temp
AS $fn$
DECLARE
    t text;
    cutoff constant timestamptz := now() - interval '1 hour';
    max_events constant integer := 100000;
    lo numeric;
    hi numeric;
    mid numeric;
    seen_at timestamptz;
    err_state text;
    err_message text;
    err_hint text;
BEGIN
    IF NOT (has_table_privilege('todo.tenants', 'SELECT') AND has_table_privilege('todo.todos', 'SELECT')
            AND has_table_privilege('todo.events', 'SELECT')) THEN
        RAISE EXCEPTION 'todo.stats: role % may not read todo.tenants, todo.todos and todo.events', current_user
            USING ERRCODE = '42501',
                  HINT = 'call it as an administrator (every tenant) or as an app''s role, todo.grant_usage(role, tenant, plain_sql => true) (its tenant)';
    END IF;
    -- under row-level security the tenant in context decides what it reads: none (or one the
    -- role may not act for) is refused here, in todo.current_tenant()'s words, rather than by
    -- the policy from inside a statement of this function (whose text the error would show)
    IF row_security_active('todo.tenants') THEN
        BEGIN
            PERFORM todo.current_tenant();
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT, err_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = 'todo.stats: ' || err_message, HINT = err_hint;
        END;
    END IF;
    FOR t IN SELECT n.tenant_id FROM todo.tenants n
              WHERE stats.tenant IS NULL OR n.tenant_id = stats.tenant
              ORDER BY n.tenant_id
    LOOP
        tenant_id := t;
        SELECT count(*) FILTER (WHERE x.status = 'pending'), count(*) FILTER (WHERE x.status = 'in_progress'),
               count(*) FILTER (WHERE x.status = 'blocked'), count(*) FILTER (WHERE x.status = 'deferred'),
               count(*) FILTER (WHERE x.status = 'review'), count(*) FILTER (WHERE x.status = 'completed'),
               count(*) FILTER (WHERE x.status = 'canceled')
          INTO pending, in_progress, blocked, deferred, review, completed, canceled
          FROM todo.todos x
         WHERE x.tenant_id = t;
        SELECT count(*), count(*) FILTER (WHERE x.lease_expires_at < now())
          INTO open_claims, lapsed_leases
          FROM todo.todos x
         WHERE x.tenant_id = t AND x.status = 'in_progress' AND x.claimed_by IS NOT NULL;
        -- the open todo unchanged the longest: the oldest entry of each open status
        oldest_open_id := NULL;
        oldest_open_updated_at := NULL;
        SELECT o.id, o.updated_at INTO oldest_open_id, oldest_open_updated_at
          FROM ((SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'pending' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'in_progress' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'blocked' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'deferred' ORDER BY x.updated_at LIMIT 1)
                UNION ALL
                (SELECT x.id, x.updated_at FROM todo.todos x
                  WHERE x.tenant_id = t AND x.status = 'review' ORDER BY x.updated_at LIMIT 1)) o
         ORDER BY o.updated_at, o.id
         LIMIT 1;
        -- the events of the last hour, by their transactions: the newest first (none in the
        -- hour: 0), then the oldest (in the hour: all of them), else the bisection keeps lo's
        -- first event before the hour and hi's in it until they are adjacent
        hi := NULL;
        SELECT e.xact::text::numeric, e.event_at INTO hi, seen_at
          FROM todo.events e
         WHERE e.tenant_id = t AND e.xact IS NOT NULL
         ORDER BY e.xact DESC
         LIMIT 1;
        IF hi IS NULL OR seen_at < cutoff THEN
            events_last_hour := 0;
        ELSE
            SELECT e.xact::text::numeric, e.event_at INTO lo, seen_at
              FROM todo.events e
             WHERE e.tenant_id = t AND e.xact IS NOT NULL
             ORDER BY e.xact
             LIMIT 1;
            IF seen_at >= cutoff THEN
                hi := lo;
            ELSE
                WHILE hi - lo > 1 LOOP
                    mid := lo + div(hi - lo, 2);
                    SELECT e.event_at INTO seen_at
                      FROM todo.events e
                     WHERE e.tenant_id = t AND e.xact >= mid::text::xid8
                     ORDER BY e.xact
                     LIMIT 1;
                    IF seen_at >= cutoff THEN
                        hi := mid;
                    ELSE
                        lo := mid;
                    END IF;
                END LOOP;
            END IF;
            SELECT count(*) INTO events_last_hour
              FROM (SELECT FROM todo.events e
                     WHERE e.tenant_id = t AND e.xact >= hi::text::xid8
                     LIMIT max_events) s;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION todo.stats(text) IS
    'One row per tenant (the one named, or every tenant the caller may read: row-level security decides, an administrator sees all, an app''s role its own): its todos by status (archived ones too); open_claims, the claimed in-progress todos, and lapsed_leases, those whose lease ran out; the open todo unchanged the longest (oldest_open_id, oldest_open_updated_at; NULL: none open); events_last_hour, the changes logged in the last hour, counted from the first transaction found to have written in it (at most 100000: that many or more). Each figure reads an index, never the whole history. Errors: 42501 a role that may not read todo.todos and todo.events (an agent''s); 22023 an app''s role with no tenant in context.';
