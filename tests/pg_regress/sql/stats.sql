-- stats: todo.stats(), one row per tenant: its todos by status, open claims and lapsed
-- leases, the open todo unchanged the longest, the events of the last hour. It runs as its
-- caller: an administrator sees every tenant, the app role (agent_login, row-level security)
-- only the tenant in context, an agent's role (no table privilege) is refused. The events of
-- the hour are found by their transactions, so this file commits its writes, and deletes its
-- tenants at the end.
INSERT INTO todo.tenants (tenant_id) VALUES ('stats_a'), ('stats_b'), ('stats_idle');

-- stats_a: seven todos, in a transaction of their own
BEGIN;
SELECT todo.set_context('stats_a', 'plan', 'agent-1');
SELECT todo.todo_writ('/todo add first
/todo add second
/todo add third
/todo add fourth
/todo add fifth
/todo add sixth
/todo add seventh') IS NOT NULL AS added;
COMMIT;
-- then each change a transaction: every status, two claims
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-1') IS NOT NULL AS context_set;
UPDATE todo.todos SET status = 'completed' WHERE tenant_id = 'stats_a' AND subject = 'second'; COMMIT;
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-1') IS NOT NULL AS context_set;
UPDATE todo.todos SET status = 'canceled' WHERE tenant_id = 'stats_a' AND subject = 'third'; COMMIT;
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-1') IS NOT NULL AS context_set;
UPDATE todo.todos SET status = 'blocked' WHERE tenant_id = 'stats_a' AND subject = 'fourth'; COMMIT;
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-1') IS NOT NULL AS context_set;
UPDATE todo.todos SET status = 'deferred' WHERE tenant_id = 'stats_a' AND subject = 'fifth'; COMMIT;
-- (ids read first, not in a subquery of the call: Citus runs no distributed query inside a
-- function call it pushes to a worker); the first claim's lease is one second
SELECT id AS sixth FROM todo.todos WHERE tenant_id = 'stats_a' AND subject = 'sixth' \gset
SELECT id AS seventh FROM todo.todos WHERE tenant_id = 'stats_a' AND subject = 'seventh' \gset
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-1') IS NOT NULL AS context_set;
SELECT subject FROM todo.claim(:sixth, 1); COMMIT;
BEGIN; SELECT todo.set_context('stats_a', 'plan', 'agent-2') IS NOT NULL AS context_set;
SELECT subject FROM todo.claim(:seventh, 600); COMMIT;
-- time passes: the first claim's lease runs out; (as the administrator) 'first' has not
-- changed for three days; the seven todos were added two hours ago
SELECT pg_sleep(1.2);
UPDATE todo.todos SET updated_at = now() - interval '3 days' WHERE tenant_id = 'stats_a' AND subject = 'first';
UPDATE todo.events SET event_at = now() - interval '2 hours'
 WHERE tenant_id = 'stats_a' AND xact = (SELECT min(xact) FROM todo.events WHERE tenant_id = 'stats_a');

-- stats_b: one todo, changed twice, all of it two hours ago
BEGIN; SELECT todo.set_context('stats_b') IS NOT NULL AS context_set;
SELECT todo.todo_writ('/todo add only one') IS NOT NULL AS added; COMMIT;
BEGIN; SELECT todo.set_context('stats_b') IS NOT NULL AS context_set;
UPDATE todo.todos SET status = 'review' WHERE tenant_id = 'stats_b' AND subject = 'only one'; COMMIT;
UPDATE todo.events SET event_at = now() - interval '2 hours' WHERE tenant_id = 'stats_b';

-- ========== as an administrator: every tenant ==========
SELECT tenant_id, pending, in_progress, blocked, deferred, review, completed, canceled, open_claims, lapsed_leases,
       oldest_open_id, oldest_open_updated_at < now() - interval '2 days' AS open_for_days, events_last_hour
  FROM todo.stats() WHERE tenant_id LIKE 'stats\_%' ORDER BY tenant_id;
-- the events of the hour are exactly those logged in it
SELECT s.tenant_id, s.events_last_hour FROM todo.stats() s WHERE s.tenant_id LIKE 'stats\_%' ORDER BY 1;
SELECT e.tenant_id, count(*) FILTER (WHERE e.event_at >= now() - interval '1 hour') AS logged_in_the_hour,
       count(*) AS logged_in_all
  FROM todo.events e WHERE e.tenant_id LIKE 'stats\_%' GROUP BY 1 ORDER BY 1;
-- the oldest open todo is the one unchanged the longest
SELECT oldest_open_id FROM todo.stats('stats_a') \gset
SELECT subject FROM todo.todos WHERE tenant_id = 'stats_a' AND id = :oldest_open_id;
-- one tenant by name; an unknown one has no row
SELECT tenant_id, pending, review, events_last_hour FROM todo.stats('stats_b');
SELECT count(*) AS unknown_tenant FROM todo.stats('nobody');
SELECT count(*) AS null_is_every_tenant FROM todo.stats(NULL) WHERE tenant_id LIKE 'stats\_%';
-- events in the hour, in many transactions, some of them older than it: counted from the
-- first transaction of the hour
DO $$
BEGIN
    FOR i IN 1..40 LOOP
        PERFORM todo.set_context('stats_b');
        UPDATE todo.todos SET description = 'edit ' || i WHERE tenant_id = 'stats_b' AND subject = 'only one';
        COMMIT;
    END LOOP;
END
$$;
UPDATE todo.events SET event_at = now() - interval '90 minutes'
 WHERE tenant_id = 'stats_b' AND version <= 17;
SELECT events_last_hour FROM todo.stats('stats_b');
SELECT count(*) AS logged_in_the_hour FROM todo.events e
 WHERE e.tenant_id = 'stats_b' AND e.event_at >= now() - interval '1 hour';

-- ========== as the app role: the tenant in context only ==========
\connect - agent_login
\set VERBOSITY sqlstate
SELECT count(*) FROM todo.stats();
\set VERBOSITY default
BEGIN;
-- (SET LOCAL, as plain SQL needs on a distributed store: Citus carries it to the workers)
SET LOCAL todo.tenant = 'stats_a';
SELECT tenant_id, pending, in_progress, open_claims, lapsed_leases FROM todo.stats();
SELECT count(*) AS other_tenant FROM todo.stats('stats_b');
ROLLBACK;
\connect - postgres

-- ========== an agent's role reads no table: refused, saying who may ==========
CREATE ROLE stats_agent;
SELECT todo.grant_usage('stats_agent', 'stats_a', plain_sql => false);
SET ROLE stats_agent;
SELECT * FROM todo.stats();
RESET ROLE;
SELECT todo.revoke_usage('stats_agent');
DROP ROLE stats_agent;

DELETE FROM todo.tenants WHERE tenant_id LIKE 'stats\_%';
SELECT count(*) AS stats_tenants_left FROM todo.stats() WHERE tenant_id LIKE 'stats\_%';
