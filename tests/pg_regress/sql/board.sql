-- board: what a person changes on the board (todo.board_act) and what its detail panel reads
-- (todo.board_todo), as pg_todos serve calls them: the agent in context is person:<label>.
-- Each change is recorded in todo.events with the person; an edit made on a version the todo
-- has moved past is refused with the todo as it is now; a claim is taken back only as the
-- person saw it; an archive comes with its undo; refusals write nothing; another tenant's
-- todos answer as missing ones. Runs as the extension's owner, so that it can read the tables
-- after each change in the same transaction on Citus too (which refuses a second user on a
-- shard a transaction changed); the roles granted may call both functions, PUBLIC may not.
INSERT INTO todo.tenants (tenant_id) VALUES ('board_a'), ('board_b');
SELECT has_function_privilege('agent_login', 'todo.board_act(jsonb)', 'EXECUTE') AS granted_act,
       has_function_privilege('agent_login', 'todo.board_todo(bigint)', 'EXECUTE') AS granted_todo,
       has_function_privilege('nogrant_login', 'todo.board_act(jsonb)', 'EXECUTE') AS public_act;
\set ON_ERROR_ROLLBACK on
begin;
CREATE FUNCTION pg_temp.act(action jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT r->>'status' || ' ' || regexp_replace(((r->'body') - 'todo' - 'current' - 'undo')::text,
                                              '\d{4}-\d\d-\d\dT[0-9:.]+Z', '<time>', 'g')
         || coalesce(' todo=' || (r->'body'->'todo'->>'id') || ':' || (r->'body'->'todo'->>'status')
                     || ' v' || (r->'body'->'todo'->>'version'), '')
    FROM todo.board_act(action) r $$;

-- ========== add, to a list and to the pool, and a subtask ==========
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');
SELECT pg_temp.act('{"op": "add", "list": "release-1", "subject": "build the artifacts"}');
SELECT pg_temp.act('{"op": "add", "list": "release-1", "subject": "publish them", "description": "to the <b>registry</b>"}');
SELECT pg_temp.act('{"op": "add", "list": null, "subject": "a pool todo"}');
SELECT pg_temp.act('{"op": "add", "list": "release-1", "subject": "sign them", "parent_id": 2}');
SELECT pg_temp.act('{"op": "add", "list": "release-1", "subject": "write notes"}');
SELECT id, conversation_id, subject, description, parent_id, agent_id FROM todo.todos WHERE tenant_id = 'board_a' ORDER BY id;

-- ========== edit on the version read; a change in between refuses it, with the todo as it is ==========
SELECT pg_temp.act('{"op": "edit", "id": 1, "version": 1, "subject": "build the release artifacts", "priority": "high", "owner": "agent-7"}');
-- someone else changes #1 (an agent, over SQL) ...
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-7');
SELECT todo.todo_writ('/todo start 1') IS NOT NULL AS started;
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');
-- ... so the person's edit on version 2 is refused, nothing written, and the current todo comes back
SELECT r->>'status' AS status, r->'body'->>'error' AS error,
       r->'body'->'current'->>'status' AS now_status, r->'body'->'current'->>'version' AS now_version,
       r->'body'->'current'->>'subject' AS now_subject
  FROM todo.board_act('{"op": "edit", "id": 1, "version": 2, "subject": "my stale edit"}') r;
SELECT subject, priority, owner, status, version FROM todo.todos WHERE tenant_id = 'board_a' AND id = 1;
SELECT pg_temp.act('{"op": "edit", "id": 1, "version": 3, "description": "all of them", "owner": "  "}');
SELECT description, owner FROM todo.todos WHERE tenant_id = 'board_a' AND id = 1;

-- ========== status; reorder by the window moved ==========
SELECT pg_temp.act('{"op": "status", "id": 5, "status": "completed", "version": 1}');
SELECT pg_temp.act('{"op": "status", "id": 5, "status": "in_progress"}');
SELECT pg_temp.act('{"op": "status", "id": 5, "status": "pending"}');
SELECT string_agg(id::text, ',' ORDER BY position, id) AS order_before FROM todo.todos WHERE tenant_id = 'board_a' AND conversation_id = 'release-1';
SELECT pg_temp.act('{"op": "reorder", "ids": [5, 1, 2]}');
SELECT string_agg(id::text, ',' ORDER BY position, id) AS order_after FROM todo.todos WHERE tenant_id = 'board_a' AND conversation_id = 'release-1';
SELECT pg_temp.act('{"op": "reorder", "ids": [2, 5]}');
SELECT string_agg(id::text, ',' ORDER BY position, id) AS moved_up FROM todo.todos WHERE tenant_id = 'board_a' AND conversation_id = 'release-1';
-- refused: across lists, twice the same, one missing, one alone
SELECT pg_temp.act('{"op": "reorder", "ids": [3, 1]}');
SELECT pg_temp.act('{"op": "reorder", "ids": [1, 1]}');
SELECT pg_temp.act('{"op": "reorder", "ids": [1, 999]}');
SELECT pg_temp.act('{"op": "reorder", "ids": [1]}');

-- ========== dependencies: add, see both ways, a cycle refused, remove ==========
SELECT pg_temp.act('{"op": "block", "id": 2, "on": 1}');
SELECT pg_temp.act('{"op": "block", "id": 2, "on": 1}');
SELECT pg_temp.act('{"op": "block", "id": 1, "on": 2}');
SELECT pg_temp.act('{"op": "block", "id": 1, "on": 1}');
SELECT pg_temp.act('{"op": "block", "id": 2, "on": 3}');
SELECT b->'body'->'blocked_by' AS two_waits_for, (todo.board_todo(1))->'body'->'blocks' AS one_blocks
  FROM todo.board_todo(2) b;
SELECT pg_temp.act('{"op": "unblock", "id": 2, "on": 3}');
SELECT todo_id, depends_on FROM todo.dependencies WHERE tenant_id = 'board_a' ORDER BY 1, 2;

-- ========== a claim taken back, as the person saw it ==========
-- agent-7 claims #1
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-7');
SELECT todo.todo_writ('/todo claim 1') IS NOT NULL AS claimed;
SELECT claimed_by, fence FROM todo.todos WHERE tenant_id = 'board_a' AND id = 1 \gset
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');
-- a person cannot finish a todo under an agent's live claim ...
SELECT pg_temp.act('{"op": "status", "id": 1, "status": "completed"}');
-- ... but may take the claim back, naming the holder and fence they saw
SELECT pg_temp.act(jsonb_build_object('op', 'release', 'id', 1, 'holder', :'claimed_by', 'fence', :fence - 1));
SELECT pg_temp.act(jsonb_build_object('op', 'release', 'id', 1, 'holder', 'agent-8', 'fence', :fence));
SELECT pg_temp.act(jsonb_build_object('op', 'release', 'id', 1, 'holder', :'claimed_by', 'fence', :fence));
SELECT status, claimed_by, lease_expires_at FROM todo.todos WHERE tenant_id = 'board_a' AND id = 1;
-- released already: nothing left to take back
SELECT pg_temp.act(jsonb_build_object('op', 'release', 'id', 1, 'holder', :'claimed_by', 'fence', :fence));
-- the agent's claim is gone: its heartbeat is refused
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-7');
SELECT todo.todo_writ('/todo heartbeat 1') AS agent_heartbeat;
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');

-- ========== a lease renewal is no change to what the person read; a real change is ==========
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-7');
SELECT todo.todo_writ('/todo claim 4') IS NOT NULL AS claimed;
SELECT version AS read FROM todo.todos WHERE tenant_id = 'board_a' AND id = 4 \gset
SELECT todo.todo_writ('/todo heartbeat 4') ~ 'OK' AS heartbeat;
SELECT version > :read AS version_moved FROM todo.todos WHERE tenant_id = 'board_a' AND id = 4;
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');
SELECT pg_temp.act(jsonb_build_object('op', 'edit', 'id', 4, 'version', :read, 'priority', 'low')) ~ '^200' AS edit_after_a_heartbeat;
SELECT version AS read FROM todo.todos WHERE tenant_id = 'board_a' AND id = 4 \gset
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-7');
SELECT todo.todo_writ('/todo subject 4: sign the artifacts') IS NOT NULL AS renamed;
SELECT FROM todo.set_context('board_a', NULL, 'person:Ada');
SELECT pg_temp.act(jsonb_build_object('op', 'edit', 'id', 4, 'version', :read, 'priority', 'high')) ~ '^409' AS edit_after_a_rename;
SELECT subject, priority FROM todo.todos WHERE tenant_id = 'board_a' AND id = 4;

-- ========== lists made on the board show before they hold a todo ==========
SELECT pg_temp.act('{"op": "create_list", "name": "launch-plan"}');
SELECT pg_temp.act('{"op": "create_list", "name": "launch-plan"}');
SELECT pg_temp.act('{"op": "create_list", "name": "  "}');
SELECT pg_temp.act('{"op": "create_list", "name": "two\nlines"}');
SELECT pg_temp.act(jsonb_build_object('op', 'create_list', 'name', repeat('x', 301)));
SELECT c->>'conversation_id' AS list, jsonb_array_length(c->'todos') AS todos
  FROM jsonb_array_elements(todo.board()->'conversations') c ORDER BY 1 NULLS FIRST;
SELECT pg_temp.act('{"op": "add", "list": "launch-plan", "subject": "first of the plan"}');
SELECT c->>'conversation_id' AS list, jsonb_array_length(c->'todos') AS todos
  FROM jsonb_array_elements(todo.board()->'conversations') c ORDER BY 1 NULLS FIRST;

-- ========== archive, and its undo ==========
SELECT r->>'status' AS status, r->'body'->'undo' AS undo, r->'body'->'todo'->>'status' AS now
  FROM todo.board_act('{"op": "archive", "id": 2}') r;
SELECT status, archived_at IS NOT NULL AS archived FROM todo.todos WHERE tenant_id = 'board_a' AND id = 2;
SELECT count(*) FILTER (WHERE t->>'id' = '2') AS on_the_board
  FROM jsonb_array_elements(todo.board()->'conversations') c, jsonb_array_elements(c->'todos') t;
SELECT pg_temp.act('{"op": "unarchive", "id": 2, "status": "pending"}');
SELECT status, archived_at IS NOT NULL AS archived FROM todo.todos WHERE tenant_id = 'board_a' AND id = 2;
-- a finished todo archived keeps its status; archived again, it stays as it is; undo puts it back
SELECT pg_temp.act('{"op": "status", "id": 5, "status": "completed"}');
SELECT r->'body'->'undo' AS undo FROM todo.board_act('{"op": "archive", "id": 5}') r;
SELECT r->'body'->'undo' AS undo_again FROM todo.board_act('{"op": "archive", "id": 5}') r;
SELECT status, archived_at IS NOT NULL AS archived FROM todo.todos WHERE tenant_id = 'board_a' AND id = 5;
SELECT pg_temp.act('{"op": "unarchive", "id": 5, "status": "completed"}');
-- only an archived todo is put back: an undo cannot move a todo the lifecycle would not
SELECT pg_temp.act('{"op": "unarchive", "id": 5, "status": "in_progress"}');
SELECT status, archived_at IS NOT NULL AS archived FROM todo.todos WHERE tenant_id = 'board_a' AND id = 5;

-- ========== the detail: every column a person reads, and the history with who did what ==========
SELECT jsonb_pretty((b->'body'->'todo') - 'created_at' - 'updated_at' - 'started_at' - 'completed_at' - 'archived_at' - 'lease_expires_at')
  FROM todo.board_todo(2) b;
SELECT e->>'version' AS version, e->>'action' AS action, e->>'agent_id' AS agent, e->>'old_status' AS old, e->>'new_status' AS new,
       (SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(e->'changes') k) AS changed
  FROM todo.board_todo(1) b, jsonb_array_elements(b->'body'->'history') e;
SELECT b->'body'->'subtasks' AS subtasks, b->'body'->>'history_omitted' AS history_omitted FROM todo.board_todo(2) b;
-- every change above is recorded with the person (or the agent that made it)
SELECT agent_id, count(*) FROM todo.events WHERE tenant_id = 'board_a' GROUP BY 1 ORDER BY 1;
SELECT todo.board_todo(999);

-- a todo may wait for one of the tenant-wide pool
SELECT pg_temp.act('{"op": "block", "id": 1, "on": 3}') AS pool_todo_ok;
SELECT pg_temp.act('{"op": "unblock", "id": 1, "on": 3}');

-- ========== bad actions: a 400 that says what to fix, nothing written ==========
SELECT count(*) AS events_before FROM todo.events WHERE tenant_id = 'board_a' \gset
SELECT pg_temp.act('[]');
SELECT pg_temp.act('{}');
SELECT pg_temp.act('{"op": "delete_everything"}');
SELECT pg_temp.act('{"op": "add", "subject": "x", "tenant_id": "board_b"}');
SELECT pg_temp.act('{"op": "add", "subject": "   "}');
SELECT pg_temp.act('{"op": "add", "subject": 7}');
SELECT pg_temp.act('{"op": "edit", "id": 1, "subject": "no version"}');
SELECT pg_temp.act('{"op": "edit", "id": 1, "version": 5}');
SELECT pg_temp.act('{"op": "edit", "id": 1, "version": 5, "priority": "urgent"}');
SELECT pg_temp.act('{"op": "edit", "id": "1", "version": 5, "subject": "s"}');
SELECT pg_temp.act('{"op": "edit", "id": 1.5, "version": 5, "subject": "s"}');
SELECT pg_temp.act('{"op": "status", "id": 1, "status": "done-ish"}');
SELECT pg_temp.act('{"op": "release", "id": 1, "holder": "agent-7"}');
SELECT pg_temp.act(jsonb_build_object('op', 'add', 'subject', repeat('s', 20001)));
SELECT pg_temp.act('{"op": "block", "id": 6, "on": 1}');
SELECT count(*) - :events_before AS events_written FROM todo.events WHERE tenant_id = 'board_a';
SELECT todo.board_act(NULL);
-- only a person's changes: an agent in context (an agent's role calling it) gets 403, nothing done
SELECT FROM todo.set_context('board_a', 'release-1', 'agent-8');
SELECT pg_temp.act('{"op": "release", "id": 1, "holder": "agent-7", "fence": 1}');
SELECT pg_temp.act('{"op": "archive", "id": 1}');
SELECT FROM todo.set_context('board_a', NULL, NULL);
SELECT pg_temp.act('{"op": "add", "subject": "no one"}');
SELECT count(*) - :events_before AS events_written FROM todo.events WHERE tenant_id = 'board_a';

-- ========== another tenant's todos answer as missing ones ==========
SELECT FROM todo.set_context('board_b', NULL, 'person:Bee');
SELECT pg_temp.act('{"op": "edit", "id": 1, "version": 1, "subject": "mine now"}');
SELECT pg_temp.act('{"op": "archive", "id": 1}');
SELECT pg_temp.act('{"op": "reorder", "ids": [1, 2]}');
SELECT pg_temp.act('{"op": "block", "id": 1, "on": 2}');
SELECT todo.board_todo(1);
SELECT count(*) AS lists_of_b FROM jsonb_array_elements(todo.board()->'conversations');

-- ========== bounded: a todo waiting for 60 shows 50 of them on the board, 60 in its detail ==========
INSERT INTO todo.todos (subject) SELECT 'blocker ' || g FROM generate_series(1, 60) g;
INSERT INTO todo.todos (subject) VALUES ('waits for all of them') RETURNING id AS waiter \gset
SELECT count(*) FILTER (WHERE todo.block(:waiter, g)) AS blocked FROM generate_series(1, 60) g;
SELECT jsonb_array_length(t->'blocked_by') AS on_the_board, todo.board()->'limits'->'blocked_by' AS limit_said
  FROM jsonb_array_elements(todo.board()->'conversations') c, jsonb_array_elements(c->'todos') t WHERE (t->>'id')::int = :waiter;
SELECT jsonb_array_length(b->'body'->'todo'->'blocked_by') AS detail_ids, jsonb_array_length(b->'body'->'blocked_by') AS detail_list
  FROM todo.board_todo(:waiter) b;
rollback;
DELETE FROM todo.tenants WHERE tenant_id IN ('board_a', 'board_b');

-- ========== a long list read a page at a time, and what changed since a read ==========
-- (each step in its own transaction: a cursor sees what committed before it was taken)
INSERT INTO todo.tenants (tenant_id) VALUES ('board_c'), ('board_d');
SELECT has_function_privilege('agent_login', 'todo.board_page(text, text, integer)', 'EXECUTE') AS granted_page,
       has_function_privilege('agent_login', 'todo.board_changes(text, bigint[])', 'EXECUTE') AS granted_changes,
       has_function_privilege('nogrant_login', 'todo.board_changes(text, bigint[])', 'EXECUTE') AS public_changes;
begin;
SELECT FROM todo.set_context('board_c', 'long', 'agent-1');
SELECT todo.todo_writ($$/todo add step 1
/todo add step 2
/todo add step 3
/todo add step 4
/todo add step 5
/todo add step 6
/todo add step 7$$) IS NOT NULL AS planned;
commit;
begin;
SELECT FROM todo.set_context('board_c', NULL, 'person:Ada');
-- the first 3 of each list, and where the next page starts
SELECT c->>'conversation_id' AS list, jsonb_path_query_array(c, '$.todos[*].subject') AS read,
       c->'todos_omitted' AS omitted, c->>'next' IS NOT NULL AS more, b->'limits'->'todos' AS per_list
  FROM todo.board(3) b, jsonb_array_elements(b->'conversations') c;
SELECT c->>'next' AS next FROM jsonb_array_elements(todo.board(3)->'conversations') c \gset
SELECT p->'status' AS status, jsonb_path_query_array(p->'body', '$.todos[*].subject') AS page, p->'body'->>'next' IS NOT NULL AS more,
       p->'body'->>'next' AS next2
  FROM todo.board_page('long', :'next', 3) p \gset
SELECT :status AS status, :'page' AS page, :'more' AS more;
SELECT jsonb_path_query_array(p->'body', '$.todos[*].subject') AS last_page, p->'body'->'next' AS next
  FROM todo.board_page('long', :'next2', 3) p;
-- each row with its place; the detail's texts are not in it
SELECT t ? 'position' AS placed, t ? 'description' AS texts FROM jsonb_array_elements(todo.board_page('long', NULL, 1)->'body'->'todos') t;
-- the pool, empty; a list with no todo
SELECT todo.board_page(NULL), todo.board_page('nothing here');
-- what to fix: 400, nothing read
SELECT todo.board_page('long', 'x', 3)->'body' AS bad_place, todo.board_page('long', NULL, 0)->'body' AS bad_size,
       todo.board_page('long', NULL, 201)->'status' AS too_many;
SELECT todo.board(0);
SELECT todo.board(NULL);
SELECT todo.board_changes('yesterday')->'body' AS bad_cursor;
SELECT todo.board_changes(NULL, array_fill(1::bigint, ARRAY[201]))->'body' AS too_many_also;
-- the cursor to follow
SELECT todo.board()->>'cursor' AS cursor \gset
SELECT b->'status' AS status, b->'body'->'todos' AS todos, b->'body'->'reload' AS reload FROM todo.board_changes(:'cursor') b;
SELECT min(id) AS first, min(id) + 1 AS second, min(id) + 2 AS third FROM todo.todos WHERE tenant_id = 'board_c' \gset
commit;
-- an agent makes #third wait for #second, then finishes #second; the person archives #first
begin;
SELECT FROM todo.set_context('board_c', 'long', 'agent-2');
SELECT todo.block(:third, :second) AS blocked;
commit;
begin;
SELECT FROM todo.set_context('board_c', NULL, 'person:Ada');
SELECT todo.board()->>'cursor' AS cursor \gset
commit;
begin;
SELECT FROM todo.set_context('board_c', 'long', 'agent-2');
SELECT todo.todo_writ('/todo done ' || :second) IS NOT NULL AS done;
SELECT FROM todo.set_context('board_c', NULL, 'person:Ada');
SELECT todo.board_act(jsonb_build_object('op', 'archive', 'id', :first))->'status' AS archived;
commit;
begin;
SELECT FROM todo.set_context('board_c', NULL, 'person:Ada');
-- #second (done), #third (its blocker gone: no event of its own), #first (archived)
SELECT t->>'id' = :'first' AS first, t->>'id' = :'second' AS second, t->>'id' = :'third' AS third,
       t->>'status' AS status, t->'blocked_by' AS blocked_by, t->>'archived_at' IS NOT NULL AS archived, t->>'conversation_id' AS list
  FROM jsonb_array_elements(todo.board_changes(:'cursor')->'body'->'todos') t ORDER BY (t->>'id')::bigint;
-- nothing changed since: no todo; "also" reads todos anyway (a lease renewed records no event)
SELECT todo.board_changes(:'cursor')->'body'->>'cursor' AS cursor2 \gset
SELECT jsonb_array_length(todo.board_changes(:'cursor2')->'body'->'todos') AS unchanged,
       jsonb_path_query_array(todo.board_changes(:'cursor2', ARRAY[:third]::bigint[])->'body', '$.todos[*].id') = jsonb_build_array(:third) AS also_read;
SELECT b ? 'attention' AND b ? 'attention_omitted' AND b ? 'empty_lists' AND b ? 'now' AS complete FROM todo.board_changes(:'cursor2') r, LATERAL (SELECT r->'body' AS b) x;
-- a list made on the board comes with the changes while it holds no todo
SELECT todo.board_act('{"op": "create_list", "name": "next-release"}')->'status' AS made;
commit;
begin;
SELECT FROM todo.set_context('board_c', NULL, 'person:Ada');
SELECT todo.board_changes(:'cursor2')->'body'->'empty_lists' AS empty_lists;
commit;
-- another tenant: its cursor, its pages and "also" never show board_c's todos
begin;
SELECT FROM todo.set_context('board_d', NULL, 'person:Bee');
SELECT todo.board_changes(:'cursor')->'body'->'todos' AS changes_of_d,
       todo.board_changes(NULL, ARRAY[:first, :second, :third]::bigint[])->'body'->'todos' AS also_of_d,
       todo.board_page('long')->'body'->'todos' AS page_of_d;
commit;
DELETE FROM todo.tenants WHERE tenant_id IN ('board_c', 'board_d');

-- ========== the filters' matches: words of the subject or the description, who, status, list ==========
INSERT INTO todo.tenants (tenant_id) VALUES ('board_e'), ('board_f');
begin;
SELECT FROM todo.set_context('board_e', 'web', 'agent-1');
SELECT todo.todo_writ($$/todo add deploy the site
/todo add write the docs
/todo add 100% coverage_now$$) IS NOT NULL AS planned;
SELECT FROM todo.set_context('board_e', NULL, 'agent-2');
SELECT todo.todo_writ('/todo add a pool task') IS NOT NULL AS pooled;
SELECT min(id) AS e1 FROM todo.todos WHERE tenant_id = 'board_e' \gset
SELECT FROM todo.set_context('board_e', NULL, 'person:Cy');
SELECT todo.board_act(jsonb_build_object('op', 'edit', 'id', :e1 + 1, 'version', 1,
                                         'description', 'after the DEPLOY, tell them'))->'status' AS described;
commit;
begin;
SELECT FROM todo.set_context('board_e', NULL, 'person:Ada');
CREATE FUNCTION pg_temp.found(filters jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(t->>'subject', ' | ' ORDER BY n), '(none)') || ' more=' || (r->'body'->>'more')
    FROM todo.board_search(filters) r LEFT JOIN LATERAL jsonb_array_elements(r->'body'->'todos') WITH ORDINALITY AS x(t, n) ON true
   GROUP BY r $$;
SELECT pg_temp.found('{"q": "deploy"}') AS words;
SELECT pg_temp.found('{"q": "deploy", "list": "web", "status": "pending"}') AS in_web;
SELECT pg_temp.found('{"list": null}') AS pool, pg_temp.found('{"who": "AGENT-2"}') AS who, pg_temp.found('{"who": "cy"}') AS last_actor;
SELECT pg_temp.found('{"q": "0% c"}') AS percent, pg_temp.found('{"q": "_"}') AS underscore;
SELECT pg_temp.found('{"status": "completed"}') AS none_done, pg_temp.found('{}') AS everything;
SELECT todo.board_search('{"status": "done"}')->'body' AS bad_status, todo.board_search('{"colour": "red"}')->'body' AS unknown;
SELECT todo.board_search(jsonb_build_object('q', repeat('x', 201)))->'body' AS too_long, todo.board_search('{"q": 7}')->'body' AS not_text;
commit;
begin;
SELECT FROM todo.set_context('board_f', NULL, 'person:Bee');
SELECT pg_temp.found('{"q": "deploy"}') AS other_tenant;
commit;
DELETE FROM todo.tenants WHERE tenant_id IN ('board_e', 'board_f');

-- ========== labels and due dates; moving to another list, under another parent; the archived ==========
INSERT INTO todo.tenants (tenant_id) VALUES ('board_g');
begin;
SELECT FROM todo.set_context('board_g', NULL, 'person:Ada');
CREATE FUNCTION pg_temp.gact(action jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT r->>'status' || ' ' || coalesce(r->'body'->>'error',
         (r->'body'->'todo')->>'id' || ' list=' || coalesce((r->'body'->'todo')->>'conversation_id', '(pool)')
         || ' parent=' || coalesce((r->'body'->'todo')->>'parent_id', '-')
         || ' position=' || ((r->'body'->'todo')->>'position')
         || ' labels=' || coalesce((r->'body'->'todo')->>'labels', '-')
         || ' due=' || coalesce(to_char(((r->'body'->'todo')->>'due_at')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '-'))
    FROM todo.board_act(action) r $$;
SELECT min(id) - 1 AS g FROM (SELECT (todo.board_act(jsonb_build_object('op', 'add', 'list', l, 'subject', s))->'body'->'todo'->>'id')::bigint AS id
                               FROM (VALUES ('a', 'one'), ('a', 'two'), ('b', 'three'), ('b', 'four'), ('a', 'five')) v(l, s)) x \gset
-- labels (trimmed, each once) and a due date; then none
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 1, 'labels', '[" ui ", "bug", "ui"]'::jsonb, 'due_at', '2026-12-24'));
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 2, 'labels', '[]'::jsonb, 'due_at', null));
SELECT labels, due_at IS NULL AS no_due FROM todo.todos WHERE tenant_id = 'board_g' AND id = :g + 1;
-- what to fix: a label with a comma, too many, too long, a date that is none
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 3, 'labels', '["a,b"]'::jsonb));
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 3, 'labels', (SELECT jsonb_agg(i::text) FROM generate_series(1, 21) i)));
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 3, 'labels', jsonb_build_array(repeat('x', 51))));
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 3, 'due_at', '2026-02-30'));
SELECT pg_temp.gact(jsonb_build_object('op', 'edit', 'id', :g + 1, 'version', 3, 'due_at', 20261224));
-- (a move made on the version the person read: the current one, but where a test says)
CREATE FUNCTION pg_temp.mv(id bigint, dest jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  read integer;
BEGIN
  SELECT t.version INTO read FROM todo.todos t WHERE t.tenant_id = 'board_g' AND t.id = mv.id;
  RETURN pg_temp.gact(jsonb_build_object('op', 'move', 'id', id, 'version', read) || dest);
END $$;
-- to list b's end; to the pool; under #3 (so onto b); to no parent (staying on b)
SELECT pg_temp.mv(:g + 1, '{"list": "b"}');
SELECT pg_temp.mv(:g + 1, '{"list": null}');
SELECT pg_temp.mv(:g + 2, jsonb_build_object('parent_id', :g + 3));
SELECT pg_temp.mv(:g + 2, '{"parent_id": null}');
SELECT pg_temp.mv(:g + 4, jsonb_build_object('parent_id', :g + 3));
SELECT string_agg(id - :g || '@' || coalesce(conversation_id, 'pool') || coalesce('<' || (parent_id - :g), ''), ' '
                  ORDER BY conversation_id NULLS FIRST, position, id) AS lists
  FROM todo.todos WHERE tenant_id = 'board_g';
-- refused, nothing written: a version moved past, a cycle through subtasks, itself, a list
-- besides the parent's, a dependency taken across lists (either end), nothing named, a bad
-- name, no such parent, an archived parent
SELECT pg_temp.gact(jsonb_build_object('op', 'move', 'id', :g + 1, 'version', 1, 'list', 'a'));
SELECT pg_temp.mv(:g + 3, jsonb_build_object('parent_id', :g + 4));
SELECT pg_temp.mv(:g + 5, jsonb_build_object('parent_id', :g + 5));
SELECT pg_temp.mv(:g + 5, jsonb_build_object('parent_id', :g + 3, 'list', 'a'));
SELECT todo.board_act(jsonb_build_object('op', 'block', 'id', :g + 2, 'on', :g + 3))->'status' AS blocked;
SELECT pg_temp.mv(:g + 2, '{"list": "a"}');
SELECT pg_temp.mv(:g + 3, '{"list": "a"}');
SELECT pg_temp.mv(:g + 5, '{}');
SELECT pg_temp.mv(:g + 5, '{"list": " b"}');
SELECT pg_temp.mv(:g + 5, jsonb_build_object('parent_id', :g + 99));
SELECT todo.board_act(jsonb_build_object('op', 'archive', 'id', :g + 1))->'status' AS archived_1;
SELECT pg_temp.mv(:g + 5, jsonb_build_object('parent_id', :g + 1));
SELECT string_agg(id - :g || '@' || coalesce(conversation_id, 'pool') || coalesce('<' || (parent_id - :g), ''), ' ' ORDER BY id) AS unchanged
  FROM todo.todos WHERE tenant_id = 'board_g';
-- each move is an event with the person
SELECT e.todo_id - :g AS todo, e.version, e.agent_id, e.changes - 'updated_at' AS changes FROM todo.events e
 WHERE e.tenant_id = 'board_g' AND e.action = 'update' AND (e.changes ? 'conversation_id' OR e.changes ? 'parent_id')
 ORDER BY e.todo_id, e.version;
-- the archived, the newest archived first, with the other filters; put back, it leaves them
SELECT todo.board_act(jsonb_build_object('op', 'archive', 'id', :g + 4))->'status' AS archived_4;
SELECT pg_temp.found('{"archived": true}') AS archived, pg_temp.found('{"archived": true, "q": "four"}') AS four,
       pg_temp.found('{"archived": false, "list": "b"}') AS on_b;
SELECT todo.board_act(jsonb_build_object('op', 'unarchive', 'id', :g + 1))->'status' AS put_back;
SELECT pg_temp.found('{"archived": true}') AS archived_after, todo.board_search('{"archived": "yes"}')->'body' AS not_boolean;
-- several at once (a selection), all or none: complete two and assign a third; archive two
-- (the answer's undo puts both back); one refused (a live claim) writes nothing of the others
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(id - (SELECT min(id) - 1 FROM todo.todos WHERE tenant_id = 'board_g') || '=' || status
                    || coalesce('/' || owner, '') || CASE WHEN archived_at IS NOT NULL THEN '/archived' ELSE '' END, ' ' ORDER BY id)
    FROM todo.todos WHERE tenant_id = 'board_g' $$;
SELECT pg_temp.state() AS before;
SELECT version AS v3 FROM todo.todos WHERE tenant_id = 'board_g' AND id = :g + 3 \gset
SELECT r->>'status' AS status, jsonb_path_query_array(r->'body', '$.todos[*].id') AS todos, r->'body'->'undo' IS NULL AS no_undo
  FROM todo.board_act(jsonb_build_object('op', 'bulk', 'actions', jsonb_build_array(
         jsonb_build_object('op', 'status', 'id', :g + 5, 'status', 'completed'),
         jsonb_build_object('op', 'edit', 'id', :g + 3, 'version', :v3, 'owner', 'agent-9'),
         jsonb_build_object('op', 'status', 'id', :g + 2, 'status', 'completed')))) r;
SELECT pg_temp.state() AS after_bulk;
SELECT todo.board_act(jsonb_build_object('op', 'bulk', 'actions', jsonb_build_array(
         jsonb_build_object('op', 'archive', 'id', :g + 5), jsonb_build_object('op', 'archive', 'id', :g + 2))))->'body'->'undo' AS undo \gset
SELECT pg_temp.state() AS archived_two;
SELECT todo.board_act(:'undo')->>'status' AS undone, pg_temp.state() AS put_back;
SELECT FROM todo.set_context('board_g', 'b', 'agent-7');
SELECT id - :g AS claimed FROM todo.claim(:g + 3);
SELECT FROM todo.set_context('board_g', NULL, 'person:Ada');
SELECT r->>'status' AS status, regexp_replace(r->'body'->>'error', '\d{4}-\d\d-\d\dT[0-9:.]+Z', '<time>') AS error,
       r->'body'->>'index' AS index
  FROM todo.board_act(jsonb_build_object('op', 'bulk', 'actions', jsonb_build_array(
         jsonb_build_object('op', 'status', 'id', :g + 3, 'status', 'completed'),
         jsonb_build_object('op', 'status', 'id', :g + 2, 'status', 'pending')))) r;
SELECT pg_temp.state() AS nothing_written;
-- nor is a todo under an agent's live claim moved off its list
SELECT regexp_replace(pg_temp.mv(:g + 3, '{"list": "a"}'), '\d{4}-\d\d-\d\dT[0-9:.]+Z', '<time>') AS claimed_move;
-- what to fix: none, a todo twice, an op a selection does not do, one with no id
SELECT pg_temp.gact('{"op": "bulk", "actions": []}');
SELECT pg_temp.gact(jsonb_build_object('op', 'bulk', 'actions', jsonb_build_array(jsonb_build_object('op', 'archive', 'id', :g + 1), jsonb_build_object('op', 'archive', 'id', :g + 1))));
SELECT pg_temp.gact(jsonb_build_object('op', 'bulk', 'actions', jsonb_build_array(jsonb_build_object('op', 'move', 'id', :g + 1, 'version', 1, 'list', 'a'))));
SELECT pg_temp.gact('{"op": "bulk", "actions": [{"op": "archive"}]}');
-- a number serde_json cannot hold, an action nested too deep: 400 (was an internal error, XX000)
SELECT todo.board_act('{"op": "add", "subject": "x", "list": 1e400}') AS huge_number;
SELECT todo.board_act((repeat('[', 200) || repeat(']', 200))::jsonb) AS too_deep;
SELECT todo.board_search('{"q": 1e400}') AS huge_filter;
-- comments and checklists: each a change of the todo, by the person, in its history
SELECT pg_temp.gact(jsonb_build_object('op', 'comment', 'id', :g + 5, 'body', '  shipped to staging; QA next  '));
SELECT pg_temp.gact(jsonb_build_object('op', 'add_item', 'id', :g + 5, 'kind', 'acceptance', 'text', 'works offline'));
SELECT pg_temp.gact(jsonb_build_object('op', 'add_item', 'id', :g + 5, 'kind', 'done', 'text', 'documented'));
SELECT pg_temp.gact(jsonb_build_object('op', 'check', 'id', :g + 5, 'kind', 'acceptance', 'position', 1, 'text', 'works offline', 'checked', true));
-- what to fix: the item is not what was read (409), a kind that is none, a blank comment, no such todo
SELECT pg_temp.gact(jsonb_build_object('op', 'check', 'id', :g + 5, 'kind', 'acceptance', 'position', 1, 'text', 'works online', 'checked', false));
SELECT pg_temp.gact(jsonb_build_object('op', 'add_item', 'id', :g + 5, 'kind', 'todo', 'text', 'x'));
SELECT pg_temp.gact(jsonb_build_object('op', 'comment', 'id', :g + 5, 'body', '   '));
SELECT pg_temp.gact(jsonb_build_object('op', 'comment', 'id', :g + 99, 'body', 'hello'));
SELECT d->'comments' #- '{0,at}' AS comments, d->'comments_omitted' AS omitted, d->'checklists' AS checklists
  FROM (SELECT todo.board_todo(:g + 5)->'body' AS d) x;
SELECT e->>'agent_id' AS who, e->'changes' AS changes FROM jsonb_array_elements(todo.board_todo(:g + 5)->'body'->'history') e
 WHERE e->'changes' ?| ARRAY['comment', 'added', 'checked', 'unchecked'] ORDER BY (e->>'version')::int;
commit;
DELETE FROM todo.tenants WHERE tenant_id = 'board_g';
