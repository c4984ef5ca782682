-- tools_beads: beads-mcp's tools over the store: its schemas, results in its models' key
-- order, its refusals with nothing written, a claim that is pg_todos' fenced claim,
-- dependencies that are real ones, another tenant's issues answered like missing ones, and
-- issues read back through other dialects (and theirs through beads).
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme'), ('globex');
CREATE FUNCTION pg_temp.said(tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace((r->'content'->0->>'text') || CASE WHEN (r->>'isError')::bool THEN '  [isError]' ELSE '' END,
         '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z', '<time>', 'g'), '"bd-(?!a1b"|c3d"|zzz"|missing")[0-9a-z]{3,8}"', '"<new id>"', 'g')
    FROM todo.call_mcp('beads/' || tool, args) r $$;
CREATE FUNCTION pg_temp.rows(conv text) RETURNS TABLE (id text, subject text, status text, priority text, owner text, claimed_by text,
                                                       labels text[], issue_type text, plan text, notes text) LANGUAGE sql AS $$
  SELECT CASE WHEN external_id IN ('bd-a1b', 'bd-c3d') OR external_id !~ '^bd-' THEN external_id ELSE '<new id>' END,
         subject, status, priority, owner, claimed_by, labels, issue_type, plan, notes FROM todo.todos
   WHERE tenant_id = 'acme' AND conversation_id = conv ORDER BY id $$;

-- ========== the catalog: beads-mcp's names, in its order, and its schemas ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT string_agg(t->>'name', ', ' ORDER BY n) AS tools FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, n)
 WHERE t->'_meta'->>'pg_todos/dialect' = 'beads';
SELECT t->'inputSchema' AS claim_schema FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'claim';
SELECT t->>'description' AS update_description FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' = 'beads' AND t->>'name' = 'update';
SELECT pg_temp.said('discover_tools', '{}');
SELECT pg_temp.said('get_tool_info', '{"tool_name": "claim"}');
SELECT pg_temp.said('get_tool_info', '{"tool_name": "admin"}');

-- ========== create, dependencies, ready, blocked, show ==========
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('create', '{"title": "Fix the parser", "id": "bd-a1b", "priority": 1, "issue_type": "bug",
  "labels": ["backend", "urgent"], "description": "The escape branch drops a quote", "design": "split the lexer",
  "acceptance": "tests/escape.rs passes", "external_ref": "gh-9", "assignee": "ada"}');
SELECT pg_temp.said('create', '{"title": "Release 1.2.1", "id": "bd-c3d", "deps": ["bd-a1b", "related:bd-a1b"]}');
SELECT pg_temp.said('create', '{"title": "Write the post", "priority": 3, "brief": false}');
SELECT pg_temp.said('dep', '{"issue_id": "bd-c3d", "depends_on_id": "bd-a1b"}');
SELECT pg_temp.said('dep', '{"issue_id": "bd-a1b", "depends_on_id": "bd-c3d"}');
SELECT pg_temp.said('dep', '{"issue_id": "bd-a1b", "depends_on_id": "bd-a1b"}');
SELECT pg_temp.said('dep', '{"issue_id": "bd-a1b", "depends_on_id": "bd-zzz"}');
SELECT pg_temp.said('ready', '{}');
SELECT pg_temp.said('ready', '{"labels": ["backend"], "brief": true}');
SELECT pg_temp.said('blocked', '{}');
SELECT pg_temp.said('show', '{"issue_id": "bd-c3d", "brief_deps": true}');
SELECT pg_temp.said('show', '{"issue_id": "bd-a1b", "fields": ["title", "labels", "dependents"]}');
SELECT pg_temp.said('list', '{"query": "RELEASE", "fields": ["bogus"]}');
SELECT pg_temp.said('stats', '{}');
SELECT * FROM pg_temp.rows('project:/home/me/app');

-- ========== claim: pg_todos' fenced claim, the claimer the assignee ==========
SELECT pg_temp.said('claim', '{"issue_id": "bd-c3d"}');
SELECT pg_temp.said('claim', '{"issue_id": "bd-a1b"}');
SELECT subject, status, owner, claimed_by, fence FROM todo.todos WHERE tenant_id = 'acme' AND external_id = 'bd-a1b';
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'codex@s2', 'turn-1');
SELECT pg_temp.said('claim', '{"issue_id": "bd-a1b"}');
SELECT pg_temp.said('close', '{"issue_id": "bd-a1b"}');
SELECT FROM todo.set_context('acme', 'project:/home/me/app', 'claude@s1', 'turn-1');
-- close: refused while it waits; then done, the next one ready
SELECT pg_temp.said('close', '{"issue_id": "bd-c3d"}');
SELECT pg_temp.said('close', '{"issue_id": "bd-a1b", "reason": "Fixed in #12"}');
SELECT pg_temp.said('ready', '{"brief": true}');
SELECT pg_temp.said('list', '{"status": "closed"}');
SELECT pg_temp.said('list', '{"status": "bogus"}');
-- update and reopen
SELECT pg_temp.said('update', '{"issue_id": "bd-c3d", "status": "deferred", "priority": 4, "notes": "after the freeze", "title": "Release 1.2.1 (after the freeze)"}');
SELECT pg_temp.said('update', '{"issue_id": "bd-c3d", "priority": 0, "brief": false}');
SELECT pg_temp.said('update', '{"issue_id": "bd-c3d", "status": "pinned"}');
SELECT pg_temp.said('update', '{"issue_id": "bd-c3d"}');
SELECT pg_temp.said('update', '{"issue_id": "bd-c3d", "status": "closed"}');
SELECT pg_temp.said('reopen', '{"issue_ids": ["bd-c3d", "bd-a1b"], "reason": "regressed"}');
SELECT pg_temp.said('reopen', '{"issue_ids": ["bd-c3d"]}');
-- the pydantic refusals of numbers out of range, and a missing issue
SELECT pg_temp.said('ready', '{"limit": 0}');
SELECT pg_temp.said('create', '{"title": "x", "priority": 5}');
SELECT pg_temp.said('show', '{"issue_id": "bd-missing"}');
SELECT pg_temp.said('claim', '{"issue_id": "bd-missing"}');
SELECT pg_temp.said('create', '{"title": "dup", "id": "bd-a1b"}');
SELECT * FROM pg_temp.rows('project:/home/me/app');

-- ========== the list through other dialects, and theirs through beads ==========
SELECT todo.list_as('claude-todowrite', 'project:/home/me/app');
SELECT todo.list_as('codex', 'project:/home/me/app');
SELECT todo.call('AddTask', '{"title": "Draft the notes"}') ->> 'title' AS added;
SELECT pg_temp.said('list', '{"brief": true}');
-- workspace_root names a project's list; context shows the one in use
SELECT pg_temp.said('list', '{"workspace_root": "/elsewhere"}');
SELECT pg_temp.said('context', '{}');
SELECT pg_temp.said('context', '{"action": "bogus"}');

-- ========== another tenant's issues are missing ones ==========
SELECT FROM todo.set_context('globex', 'project:/home/me/app', 'claude@s1', 'turn-1');
SELECT pg_temp.said('show', '{"issue_id": "bd-a1b"}');
SELECT pg_temp.said('claim', '{"issue_id": "bd-a1b"}');
SELECT pg_temp.said('list', '{}');
rollback;
