-- service: what the HTTP service and its board call. Bearer tokens (created by an
-- administrator, stored as a hash, revocable, unreadable by the app role); the change feed
-- todo.changes_since (a cursor, the conversations changed since, a rollback never shows);
-- the catch-up a page at a time; OpenCode's list shape of todo.list_as; the view
-- todo.needs_attention; todo.board() and its bounds; tokens made for a person.
-- The change feed needs committed transactions, so this file commits and deletes its
-- tenants at the end.
INSERT INTO todo.tenants (tenant_id) VALUES ('svc_a'), ('svc_b');

-- ========== tokens ==========
SELECT token_id AS ada_id, token AS ada FROM todo.create_token('svc_a', 'Ada', person => true) \gset
SELECT token AS bot FROM todo.create_token('svc_a', 'ci-bot') \gset
SELECT token AS bee FROM todo.create_token('svc_b', 'Bee', default_list => 'project:payments') \gset
SELECT :'ada' ~ '^pgt_[0-9a-f]{64}$' AS token_format, :'ada' <> :'bot' AS distinct_tokens;
-- only the hash is kept: no column holds the token
SELECT count(*) AS rows_with_hash FROM todo.tokens WHERE secret_hash = sha256(convert_to(:'ada', 'UTF8'));
SELECT count(*) AS rows_with_token FROM todo.tokens t WHERE position(:'ada' IN t::text) > 0;
SELECT * FROM todo.authenticate(:'ada');
SELECT * FROM todo.authenticate(:'bee');
-- unknown, malformed, empty, NULL: no row
SELECT count(*) AS unknown FROM todo.authenticate('pgt_' || repeat('0', 64));
SELECT count(*) AS malformed FROM todo.authenticate('Bearer ' || :'ada');
SELECT count(*) AS empty FROM todo.authenticate('');
SELECT count(*) AS null_token FROM todo.authenticate(NULL);
-- a token is an agent's unless made for a person
SELECT label, person FROM todo.tokens WHERE tenant_id IN ('svc_a', 'svc_b') ORDER BY label;
-- revoked at once, once
SELECT todo.revoke_token(token_id) AS revoked FROM todo.tokens WHERE label = 'ci-bot';
SELECT count(*) AS after_revoke FROM todo.authenticate(:'bot');
SELECT todo.revoke_token(token_id) AS revoked_again FROM todo.tokens WHERE label = 'ci-bot';
SELECT todo.revoke_token('00000000-0000-0000-0000-000000000000') AS unknown_id;
-- a token that expires: it authenticates until then; todo.token_refusal says why one does not
SELECT token AS soon FROM todo.create_token('svc_a', 'nightly', expires_in => '1 hour') \gset
SELECT count(*) AS before_expiry FROM todo.authenticate(:'soon');
UPDATE todo.tokens SET expires_at = now() - interval '1 second' WHERE label = 'nightly';
SELECT count(*) AS after_expiry FROM todo.authenticate(:'soon');
SELECT todo.token_refusal(:'ada') AS live, todo.token_refusal(:'bot') AS revoked, todo.token_refusal(:'soon') AS expired,
       todo.token_refusal('pgt_' || repeat('0', 64)) AS unknown, todo.token_refusal('') AS empty,
       todo.token_refusal(NULL) AS null_token;
-- refusals
\set VERBOSITY sqlstate
SELECT * FROM todo.create_token('svc_a', '  ');
SELECT * FROM todo.create_token('nobody', 'Ada');
SELECT * FROM todo.create_token('svc_a', 'Ada', NULL);
SELECT * FROM todo.create_token('svc_a', 'Ada', default_list => '  ');
SELECT * FROM todo.create_token('svc_a', 'Ada', expires_in => '0 seconds');
SELECT * FROM todo.create_token('svc_a', 'Ada', expires_in => '-1 day');
\set VERBOSITY default
SELECT * FROM todo.create_token('nobody', 'Ada');
-- the app role authenticates, and can neither read tokens nor make or revoke them
\connect - agent_login
SELECT * FROM todo.authenticate(:'ada');
SELECT todo.token_refusal(:'bot') AS revoked;
SELECT * FROM todo.tokens;
SELECT * FROM todo.create_token('svc_a', 'mallory');
SELECT todo.revoke_token(:'ada_id');
\connect - postgres
SELECT count(*) AS still_valid FROM todo.authenticate(:'ada');

-- ========== OpenCode's list shape ==========
BEGIN;
SELECT todo.set_context('svc_a', 'ses_1', 'agent-1');
SELECT todo.call('todowrite', '{"todos": [{"content": "Plan", "status": "completed", "priority": "high", "id": "a"},
  {"content": "Build", "status": "in_progress", "priority": "medium", "id": "b"},
  {"content": "Ship", "status": "pending", "priority": "low", "id": "c"}]}') IS NOT NULL AS written;
SELECT todo.list_as('opencode', 'ses_1') = (todo.call('todoread', '{}')->'metadata'->'todos') AS same_as_todoread;
SELECT jsonb_pretty(todo.list_as('opencode', 'ses_1'));
SELECT todo.list_as('opencode', 'no-such-session') AS unknown_session;
COMMIT;

-- ========== the change feed ==========
BEGIN;
SELECT todo.set_context('svc_a');
SELECT todo.changes_since(NULL) - 'cursor' AS no_cursor_no_changes;
SELECT todo.changes_since(NULL)->>'cursor' AS c0 \gset
SELECT :'c0' ~ '^\d+:\d+:[\d,]*$' AS cursor_is_a_snapshot;
COMMIT;
-- two conversations and the pool change, in two transactions
BEGIN;
SELECT todo.set_context('svc_a', 'ses_2', 'agent-2');
SELECT todo.todo_writ('/todo add write the feed test') IS NOT NULL AS added;
COMMIT;
BEGIN;
SELECT todo.set_context('svc_a', 'ses_1', 'agent-1');
SELECT count(*) AS started FROM todo.rest('PATCH', '/v1/todos/3', '{"status": "in_progress"}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "tenant-wide chore", "conversation_id": null}')->'status' AS pool_add;
COMMIT;
BEGIN;
SELECT todo.set_context('svc_a');
SELECT jsonb_pretty(todo.changes_since(:'c0') - 'cursor');
SELECT todo.changes_since(:'c0')->>'cursor' AS c1 \gset
SELECT todo.changes_since(:'c1')->'changes' AS nothing_since_c1;
COMMIT;
-- a rolled-back change is not in the feed; another tenant's is not either
BEGIN;
SELECT todo.set_context('svc_a', 'ses_1', 'agent-1');
SELECT todo.todo_writ('/todo add never committed') IS NOT NULL AS added;
ROLLBACK;
BEGIN;
SELECT todo.set_context('svc_b', 'ses_1', 'agent-b');
SELECT todo.todo_writ('/todo add other tenant') IS NOT NULL AS added;
COMMIT;
BEGIN;
SELECT todo.set_context('svc_a');
SELECT todo.changes_since(:'c1')->'changes' AS after_rollback_and_other_tenant;
COMMIT;
-- plain SQL is in the feed too, and a delete shows as the list without the todo
BEGIN;
SELECT todo.set_context('svc_a', 'ses_2', 'agent-2');
INSERT INTO todo.todos (subject) VALUES ('added by plain SQL');
DELETE FROM todo.todos WHERE subject = 'write the feed test';
COMMIT;
BEGIN;
SELECT todo.set_context('svc_a');
SELECT jsonb_pretty(todo.changes_since(:'c1')->'changes');
-- a page at a time: the same conversations, by id with the pool last, one per page here;
-- next is the after of the next page, null on the last; every page has a cursor
SELECT p1->'changes'->0->'conversation_id' AS first, p1->'next' AS next,
       p1->>'cursor' ~ '^\d+:\d+:[\d,]*$' AS cursor
  FROM todo.changes_since(:'c0', NULL, 1) p1;
SELECT p2->'changes'->0->'conversation_id' AS second, p2->'next' AS next
  FROM todo.changes_since(:'c0', 'ses_1', 1) p2;
SELECT p3->'changes'->0->'conversation_id' AS third, p3->'next' AS next
  FROM todo.changes_since(:'c0', 'ses_2', 1) p3;
SELECT jsonb_array_length(p->'changes') AS all_in_one_page, p->'next' AS next
  FROM todo.changes_since(:'c0', NULL, 100) p;
SELECT (todo.changes_since(:'c0', NULL, 100)->'changes') @> (todo.changes_since(:'c0')->'changes')
   AND (todo.changes_since(:'c0')->'changes') @> (todo.changes_since(:'c0', NULL, 100)->'changes') AS same_as_unpaged;
SELECT todo.changes_since(NULL, NULL, 5) - 'cursor' AS no_cursor_no_changes;
-- refusals
\set VERBOSITY sqlstate
SELECT todo.changes_since('not a cursor');
\set VERBOSITY default
ROLLBACK;
-- a page size from 1 to 1000, a cursor that is one
\set VERBOSITY sqlstate
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since(:'c0', NULL, 1001); ROLLBACK;
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since(:'c0', NULL, NULL); ROLLBACK;
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since('1:2', NULL, 10); ROLLBACK;
\set VERBOSITY default
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since(:'c0', NULL, 0); ROLLBACK;
-- a cursor PostgreSQL's pg_snapshot would refuse in words about its internals: the store's own
-- error, with what to do
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since('9:3:'); ROLLBACK;
BEGIN; SELECT todo.set_context('svc_a') IS NOT NULL AS context_set; SELECT todo.changes_since('1:9:4,2', NULL, 10); ROLLBACK;
SELECT todo.changes_since(NULL);

-- ========== needs attention, and the board ==========
BEGIN;
SELECT todo.set_context('svc_a', 'ses_3', 'agent-3');
SELECT todo.todo_writ('/todo add lapsed claim
/todo add quiet worker
/todo add waiting on a vendor
/todo add waits for the quiet worker
/todo add parent') IS NOT NULL AS added;
SELECT id, subject FROM todo.todos WHERE tenant_id = 'svc_a' AND conversation_id = 'ses_3' ORDER BY id;
SELECT id, subject FROM todo.claim(7, 60);
SELECT todo.set_context('svc_a', 'ses_3', 'agent-4');
SELECT id, subject FROM todo.claim(8, 600);
UPDATE todo.todos SET status = 'blocked' WHERE id = 9;
SELECT todo.block(10, 8);
INSERT INTO todo.todos (subject, parent_id) VALUES ('child one', 11), ('child two', 11);
UPDATE todo.todos SET status = 'completed' WHERE subject = 'child one';
-- time passes: the lease of #7 ran out; #8's claim was taken back (a live claim is not idle:
-- its lease says how long its holder may go quiet) and it has been quiet 20 minutes; #9 and
-- #10 have waited 2 hours
UPDATE todo.todos SET lease_expires_at = now() - interval '1 minute' WHERE id = 7;
UPDATE todo.todos SET claimed_by = NULL, lease_expires_at = NULL WHERE id = 8;
UPDATE todo.todos SET updated_at = now() - interval '20 minutes' WHERE id = 8;
-- a live claim quiet as long is not idle
SAVEPOINT live_claim;
UPDATE todo.todos SET status = 'pending' WHERE id = 8;
SELECT id FROM todo.claim(8, 600);
UPDATE todo.todos SET updated_at = now() - interval '20 minutes' WHERE id = 8;
SELECT count(*) AS idle_live_claims FROM todo.needs_attention WHERE tenant_id = 'svc_a' AND todo_id = 8;
ROLLBACK TO SAVEPOINT live_claim;
UPDATE todo.todos SET updated_at = now() - interval '2 hours' WHERE id IN (9, 10);
SELECT todo_id, conversation_id, subject, status, claimed_by, reason, for_seconds >= 60 AS aged
  FROM todo.needs_attention WHERE tenant_id = 'svc_a' ORDER BY todo_id, reason;
-- the thresholds are settings
SET LOCAL todo.attention_idle = '1h';
SET LOCAL todo.attention_blocked = '3h';
SELECT todo_id, reason FROM todo.needs_attention WHERE tenant_id = 'svc_a' ORDER BY todo_id, reason;
SET LOCAL todo.attention_idle = '15min';
SET LOCAL todo.attention_blocked = '1h';
SELECT b->>'tenant' AS tenant, jsonb_array_length(b->'attention') AS attention,
       (SELECT jsonb_agg(c->'conversation_id') FROM jsonb_array_elements(b->'conversations') c) AS conversations
  FROM todo.board() b;
SELECT jsonb_pretty(t - 'updated_at' - 'lease_expires_at')
  FROM jsonb_array_elements(todo.board()->'conversations') c, jsonb_array_elements(c->'todos') t
 WHERE c->>'conversation_id' = 'ses_3';
-- an archived subtask is off every list: the board and the writ both leave it out of the progress
SAVEPOINT archived;
UPDATE todo.todos SET archived_at = now() WHERE subject = 'child one';
SELECT (SELECT t->'subtasks' FROM jsonb_array_elements(todo.board()->'conversations') c, jsonb_array_elements(c->'todos') t
         WHERE t->>'subject' = 'parent') AS board_progress,
       substring(todo.todo_writ('/todo list all') from 'parent \(([0-9]+/[0-9]+) done\)') AS writ_progress;
ROLLBACK TO SAVEPOINT archived;
COMMIT;
-- as the app role: its own tenant's rows only
\connect - agent_login
BEGIN;
SELECT todo.set_context('svc_b');
SELECT count(*) AS other_tenants_attention FROM todo.needs_attention;
SELECT todo.board()->'conversations'->0->'todos'->0->>'subject' AS own_board;
SELECT todo.set_context('svc_a');
SELECT count(*) AS own_attention FROM todo.needs_attention;
ROLLBACK;
\connect - postgres

-- the board is bounded: at most 50 conversations (the pool first, then the most recently
-- active), 200 todos of each, with counts of what was left out
INSERT INTO todo.tenants (tenant_id) VALUES ('svc_big');
BEGIN;
SELECT todo.set_context('svc_big');
INSERT INTO todo.todos (subject, conversation_id, updated_at)
SELECT 'todo ' || i, 'conv-' || lpad(i::text, 3, '0'), now() - make_interval(mins => i) FROM generate_series(1, 60) i;
INSERT INTO todo.todos (subject, conversation_id) SELECT 'long ' || i, 'a-long-list' FROM generate_series(1, 205) i;
INSERT INTO todo.todos (subject) VALUES ('pool chore');
SELECT jsonb_array_length(b->'conversations') AS conversations, b->'conversations_omitted' AS conversations_omitted,
       b->'conversations'->0->'conversation_id' AS first, b->'conversations'->1->'conversation_id' AS second,
       b->'conversations'->-1->'conversation_id' AS last_shown,
       jsonb_array_length(b->'conversations'->1->'todos') AS long_list_shown,
       b->'conversations'->1->'todos_omitted' AS long_list_omitted,
       b->'conversations'->1->'todos'->-1->>'subject' AS long_list_last_shown,
       b->'conversations'->2->'todos_omitted' AS short_list_omitted,
       b->'limits' AS limits, b->'attention_omitted' AS attention_omitted
  FROM todo.board() b;
ROLLBACK;
DELETE FROM todo.tenants WHERE tenant_id = 'svc_big';

-- leave nothing behind
DELETE FROM todo.tenants WHERE tenant_id IN ('svc_a', 'svc_b');
SELECT count(*) AS tokens_left FROM todo.tokens WHERE tenant_id IN ('svc_a', 'svc_b');
