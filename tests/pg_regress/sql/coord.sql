-- coord: multi-agent coordination as the plain login role agent_login: claims with
-- leases and fencing, dependencies and cycles, the ready queue, subtasks and their progress,
-- through the writ, the tools and the SQL functions; another tenant sees none of it.
-- The context lasts one transaction, so the agents' turns run in one transaction (psql's
-- ON_ERROR_ROLLBACK keeps it going past the errors shown); each SET of the context inside it
-- holds until COMMIT. A lease is made to lapse by moving its end into the past with plain SQL.
INSERT INTO todo.tenants (tenant_id) VALUES ('coord_a'), ('coord_b'), ('waits_a');
\connect - agent_login
\set ON_ERROR_ROLLBACK on
\set VERBOSITY terse
-- the writ, with lease ends masked
CREATE FUNCTION pg_temp.w(message text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(todo.todo_writ(message), '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', '<time>', 'g')
$$;
-- an SQL call's SQLSTATE and message, or ok
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', '<time>', 'g');
END
$$;
CREATE FUNCTION pg_temp.t(tool text, args jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT regexp_replace(todo.call(tool, args)::text, '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', '<time>', 'g')::jsonb
$$;
BEGIN;
SET todo.tenant = 'coord_a';
SET todo.conversation = 'conv-1';
SET todo.agent = 'supervisor';
-- the supervisor lays out the work: #3 waits for #2, #1 has a subtask
SELECT pg_temp.w($$/todo add ship the release
/todo add build the artifacts
/todo add publish the artifacts
/todo add write the changelog
/todo add tell the users
/todo block 3 on 2
/todo subtask 1: tag the commit
/todo ready$$);
-- cycles are refused, with the path; so is a todo waiting for itself; the edge stays single
SELECT pg_temp.w($$/todo block 2 on 3
/todo block 2 on 2
/todo block 3 on 2
/todo block 3 on 99$$);
SELECT pg_temp.w($$/todo block 4 on 3
/todo block 2 on 4$$);
SELECT pg_temp.w('/todo unblock 4 on 3');
-- claims need an agent
RESET todo.agent;
SELECT pg_temp.w('/todo claim');
-- agent-a takes the first ready todo (#2: #1 waits for its subtask, #3 for #2)
SET todo.agent = 'agent-a';
SELECT pg_temp.w('/todo claim');
-- agent-b cannot take it, finish it, cancel it, release it or renew it
SET todo.agent = 'agent-b';
SELECT pg_temp.w($$/todo claim 2
/todo done 2
/todo cancel 2
/todo reopen 2
/todo release 2
/todo heartbeat 2
/todo claim 3$$);
SELECT pg_temp.w('/todo claim');
-- the list and the open block say who holds what and what waits
SELECT pg_temp.w('/todo list');
SELECT todo.todo_open_block('conv-1');
-- agent-a renews its lease; then it lapses (its end moved into the past)
SET todo.agent = 'agent-a';
SELECT pg_temp.w('/todo heartbeat 2');
UPDATE todo.todos SET lease_expires_at = now() - interval '1 second' WHERE id = 2;
SELECT pg_temp.w('/todo list');
-- a lapsed claim rejects its own holder; the todo is ready again, with no cleanup
SELECT pg_temp.w($$/todo done 2
/todo heartbeat 2
/todo release 2$$);
SELECT pg_temp.w('/todo ready');
SET todo.agent = 'agent-c';
SELECT * FROM todo.claim() \gset claim_
SELECT :claim_id AS id, :'claim_subject' AS subject, :claim_fence AS fence,
       :'claim_lease_expires_at'::timestamptz - now() BETWEEN interval '299 s' AND interval '300 s' AS five_minutes;
-- agent-a comes back with its old fence: superseded; agent-c finishes with the current one
SET todo.agent = 'agent-a';
SELECT pg_temp.try('SELECT todo.finish(2, 1)');
SELECT pg_temp.try('SELECT todo.release(2, 1)');
SELECT pg_temp.try('SELECT todo.heartbeat(2, 1)');
SET todo.agent = 'agent-c';
SELECT pg_temp.try('SELECT todo.finish(2, 1)');
SELECT pg_temp.try('SELECT todo.finish(2, 2, outcome => ''built'')');
SELECT pg_temp.try('SELECT todo.finish(2, 2)');
-- #3 no longer waits: it is ready
SELECT * FROM todo.ready();
-- the same agent claiming again gets a new fence: its earlier self is fenced out
SELECT id, fence FROM todo.claim(3);
SELECT id, fence FROM todo.claim(3);
SELECT pg_temp.try('SELECT todo.heartbeat(3, 1)');
SELECT pg_temp.try('SELECT todo.heartbeat(3, 3)');
SELECT pg_temp.try('SELECT todo.heartbeat(3, 2, 60)');
-- SQLSTATEs of the SQL functions
SELECT pg_temp.try('SELECT * FROM todo.claim(99)');
SELECT pg_temp.try('SELECT * FROM todo.claim(1, 0)');
-- the cap is the administrator's: an agent's role cannot raise (or set) it
SET todo.lease_max = '2h';
SHOW todo.lease_default;
SHOW todo.lease_max;
SELECT pg_temp.try('SELECT * FROM todo.claim(5, 3601)');
SELECT pg_temp.try('SELECT todo.finish(3, 2, ''pending'')');
SELECT pg_temp.try('SELECT todo.block(4, 4)');
SELECT pg_temp.try('SELECT todo.block(2, 3)');
SELECT todo.block(5, 4), todo.block(5, 4), todo.unblock(5, 4), todo.unblock(5, 4);
SET todo.agent = 'agent-b';
SELECT pg_temp.try('SELECT * FROM todo.claim(3)');
SELECT pg_temp.try('SELECT todo.finish(3)');
SELECT pg_temp.try('SELECT * FROM todo.claim(2)');
-- agent-b gives #4 back: pending and ready again
SELECT pg_temp.w('/todo release 4');
SELECT id, subject FROM todo.ready();
-- a plain UPDATE of the status goes through the same guard
SELECT pg_temp.try('UPDATE todo.todos SET status = ''completed'' WHERE id = 3');
-- the tools
SET todo.agent = 'agent-d';
SELECT pg_temp.t('ready_todos', '{}');
SELECT pg_temp.t('claim_todo', '{"lease_seconds": 120}');
SELECT pg_temp.t('claim_todo', '{"id": 3}');
SELECT pg_temp.t('finish_todo', '{"id": 4, "fence": 1}');
SELECT pg_temp.t('heartbeat_todo', '{"id": 4, "fence": 2, "lease_seconds": 30}');
SELECT pg_temp.t('block_todo', '{"id": 2, "on": 3}');
SELECT pg_temp.t('block_todo', '{"id": 5, "on": 4}');
SELECT pg_temp.t('unblock_todo', '{"id": 5, "on": 4}');
SELECT pg_temp.t('add_subtask', '{"parent": 1, "subject": "push the tag"}');
SELECT pg_temp.t('add_subtask', '{"parent": 99, "subject": "x"}');
SELECT pg_temp.t('claim_todo', '{"lease_seconds": 0}');
SELECT pg_temp.t('release_todo', '{"id": 5}');
SELECT pg_temp.t('finish_todo', '{"id": 4, "fence": 2, "status": "cancelled", "outcome": "not needed"}');
-- subtasks: the parent shows its progress and is ready once they are all finished
SELECT pg_temp.w($$/todo done 6
/todo list$$);
SELECT pg_temp.w($$/todo done 7
/todo ready$$);
-- claim order: priority high, then medium or unset, then low; then position
INSERT INTO todo.todos (subject, priority) VALUES ('a low one', 'low'), ('a high one', 'high'), ('a medium one', 'medium');
SELECT id, subject FROM todo.ready();
-- every other surface that changes a status meets the same guard (#3 is agent-c's)
SET todo.agent = 'agent-b';
SELECT regexp_replace(todo.rest('PATCH', '/v1/todos/3', '{"status": "completed"}')::text, '\d{4}-\d\d-\d\dT[\d:.]+Z', '<time>') AS rest_patch;
SELECT pg_temp.t('CompleteTask', '{"taskId": "3"}') AS seed_004;
SELECT pg_temp.t('todolist__set', '{"todos": [{"content": "publish the artifacts", "status": "completed", "activeForm": "Publishing"}]}') AS seed_003;
SELECT status, claimed_by FROM todo.todos WHERE id = 3;
-- a claim is never set, moved or extended by writing the columns, even by its holder
SET todo.agent = 'agent-c';
SELECT pg_temp.try('UPDATE todo.todos SET lease_expires_at = now() + interval ''1 day'' WHERE id = 3');
SELECT pg_temp.try('UPDATE todo.todos SET claimed_by = ''agent-b'' WHERE id = 3');
SELECT pg_temp.try('UPDATE todo.todos SET fence = fence + 1, status = ''completed'' WHERE id = 3');
SELECT pg_temp.try('INSERT INTO todo.todos (subject, status, claimed_by, lease_expires_at) VALUES (''x'', ''in_progress'', ''agent-c'', now() + interval ''1 hour'')');
-- a finished todo is not finished again: its outcome stays the finisher's
SET todo.agent = 'agent-a';
SELECT pg_temp.try('SELECT todo.finish(2, outcome => ''mine'')');
SELECT outcome FROM todo.todos WHERE id = 2;
-- a parent waits for its subtasks: one cannot also wait for its parent
SELECT pg_temp.try('SELECT todo.block(6, 1)');
-- the graph stays acyclic for plain SQL too, and not from a REPEATABLE READ snapshot
SELECT pg_temp.try('INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES (''coord_a'', 2, 3)');
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT todo.set_context('coord_a', 'conv-1', 'agent-a');
SELECT pg_temp.try('SELECT todo.block(5, 10)');
ROLLBACK;
BEGIN;
SELECT todo.set_context('coord_a', 'conv-1', 'agent-a');
-- the claims are in the history
SELECT todo_id, version, agent_id, old_status, new_status, changes - 'started_at' - 'completed_at' AS changes
  FROM todo.events WHERE todo_id IN (2, 4) AND action = 'update' ORDER BY todo_id, version;
SELECT * FROM todo.verify();
-- another tenant: every id is unknown, nothing is ready, nothing can be claimed
SET todo.tenant = 'coord_b';
SELECT pg_temp.w($$/todo claim
/todo claim 3
/todo heartbeat 3
/todo release 3
/todo block 5 on 4
/todo unblock 3 on 2
/todo subtask 1: x
/todo ready$$);
SELECT pg_temp.try('SELECT * FROM todo.claim(3)') AS claim_b3, pg_temp.try('SELECT * FROM todo.claim(999)') AS claim_999;
SELECT pg_temp.try('SELECT todo.finish(3, 2)') AS finish_b3, pg_temp.try('SELECT todo.finish(999, 2)') AS finish_999;
SELECT pg_temp.try('SELECT todo.block(3, 2)') AS block_b3;
SELECT * FROM todo.ready();
SELECT replace(todo.call('claim_todo', '{"id": 3}')::text, '3', '999') = todo.call('claim_todo', '{"id": 999}')::text AS same_claim,
       todo.call('claim_todo', '{}') AS claim_next;
SELECT count(*) AS visible_dependencies FROM todo.dependencies;
COMMIT;
-- waiting claims (MCP's tasks): with nothing ready a wait is working; once a todo is added,
-- the next look claims it for the agent that waits, whoever looks; another tenant does not
-- find the wait
BEGIN;
SELECT todo.set_context('waits_a', 'waits', 'waiter');
SELECT todo.changed_lists(NULL)->>'cursor' AS cursor \gset
SELECT todo.claim_wait('{"wait_seconds": 60}') AS w \gset
SELECT :'w'::jsonb->>'status' AS status, :'w'::jsonb->>'statusMessage' LIKE 'waiting for a todo to claim until %' AS waiting;
COMMIT;
BEGIN;
SELECT todo.set_context('waits_a', 'waits', 'adder');
SELECT todo.todo_writ('/todo add Ready for the waiter') IS NOT NULL AS added;
COMMIT;
BEGIN;
SELECT todo.set_context('coord_b', NULL, 'other');
SELECT left(pg_temp.try(format('SELECT todo.claim_wait_get(%L)', :'w'::jsonb->>'taskId')), 5) AS other_tenant;
COMMIT;
BEGIN;
SELECT todo.set_context('waits_a', NULL, 'someone');
-- which lists changed since the cursor (the adder's), without their todos; a bad page size
SELECT todo.changed_lists(:'cursor')->'lists' AS changed_lists,
       pg_temp.try('SELECT todo.changed_lists(NULL, NULL, 0)') AS bad_page;
SELECT t->>'status' AS status, t->>'statusMessage' ~ '^claimed #\d+$' AS claimed,
       t->'result'->'structuredContent'->>'subject' AS subject
  FROM todo.claim_wait_get(:'w'::jsonb->>'taskId') t;
SELECT pg_temp.try('SELECT todo.claim_wait(''{"wait_seconds": 0}'')') AS no_wait;
COMMIT;
-- (a transaction of its own: on Citus, plain SQL may not read what the functions, as the
-- extension's owner, wrote in the same transaction; the tenant by SET LOCAL, which Citus
-- passes on to the workers where set_config() is not, outside psql's savepoints, which
-- would make Citus forget it)
\set ON_ERROR_ROLLBACK off
BEGIN;
SET LOCAL todo.tenant = 'waits_a';
SELECT status, claimed_by FROM todo.todos WHERE subject = 'Ready for the waiter';
COMMIT;
\set ON_ERROR_ROLLBACK on
\connect - postgres
SELECT tenant_id, id, status, claimed_by, fence, parent_id FROM todo.todos WHERE tenant_id LIKE 'coord_%' ORDER BY 1, 2;
DELETE FROM todo.tenants WHERE tenant_id IN ('coord_a', 'coord_b', 'waits_a');
