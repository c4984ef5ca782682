-- tools_plan: seed 001's per-turn plan tools through todo.call: create_todo (batch, order),
-- list_todo (status filter, summary), complete_todo (outcome, remaining), scoped to the turn.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1') \gset
-- a plan of three in one call, then one placed first with order 1
SELECT todo.call('create_todo', '{"items": [
  {"title": "Research competitors", "context": "focus on pricing", "completionCriteria": "a table of 5 competitors", "agentType": "researcher"},
  {"title": "Draft the summary"},
  {"title": "Send it to the team"}]}');
SELECT todo.call('create_todo', '{"items": [{"title": "Clarify the question", "order": 1}, {"title": "Archive notes", "order": 99}]}');
-- list: the remaining items with every field (timestamps shown as their shape)
SELECT jsonb_pretty(jsonb_set(jsonb_set(r, '{items}', (
         SELECT jsonb_agg(i || jsonb_build_object('createdAt', i->>'createdAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$'))
           FROM jsonb_array_elements(r->'items') i)), '{summary}', r->'summary'))
  FROM todo.call('list_todo', '{}') r;
-- complete and cancel; remaining counts pending + in_progress
SELECT todo.call('complete_todo', '{"todoId": "4", "outcome": "scope agreed with the user"}') - 'completedAt' AS done,
       todo.call('complete_todo', '{"todoId": "4", "outcome": "scope agreed with the user"}') ? 'completedAt' AS has_completed_at;
SELECT todo.call('complete_todo', '{"todoId": "3", "outcome": "the team already has it", "status": "cancelled"}') - 'completedAt';
-- errors: unknown id, another turn's id, a forbidden transition
SELECT todo.call('complete_todo', '{"todoId": "99", "outcome": "x"}');
SELECT todo.call('complete_todo', '{"todoId": "abc", "outcome": "x"}');
SELECT todo.call('complete_todo', '{"todoId": "3", "outcome": "x"}');
SELECT todo.call('create_todo', '{"items": [{"title": "   "}]}');
-- filters
SELECT r->'summary' AS summary, jsonb_path_query_array(r, '$.items[*].title') AS titles FROM todo.call('list_todo', '{"status": "all"}') r;
SELECT jsonb_path_query_array(todo.call('list_todo', '{"status": "cancelled"}'), '$.items[*] ? (@.status == "cancelled").title') AS cancelled;
SELECT jsonb_path_query_array(todo.call('list_todo', '{"status": "completed"}'), '$.items[*].id') AS completed_ids;
-- another turn sees none of it; no turn is an error object
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-2') \gset
SELECT todo.call('list_todo', '{}');
SELECT todo.call('complete_todo', '{"todoId": "1", "outcome": "x"}');
SELECT todo.set_context('acme', 'conv-1', 'supervisor') \gset
SELECT todo.call('list_todo', '{}');
SELECT todo.call('create_todo', '{"items": [{"title": "x"}]}');
-- the same todos through the writ of the same conversation
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1') \gset
\t on
\a
SELECT todo.todo_writ('/todo list all');
rollback;
