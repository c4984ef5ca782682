-- tools_session: seed 002 (OpenCode) todowrite / todoread over the conversation as the
-- session: whole-list replace that keeps surviving items' identity, OpenCode's result shape,
-- and todo.acp_plan for ACP clients.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'ses_1', 'build') \gset
\t on
\a
SELECT jsonb_pretty(todo.call('todowrite', '{"todos": [
  {"content": "Write tests", "status": "in_progress", "priority": "high"},
  {"content": "Ship", "status": "pending", "priority": "medium"},
  {"content": "Tell the team", "status": "pending", "priority": "low"}]}'));
-- "output" is the list as JSON text, 2-space indented, in OpenCode's field order
SELECT todo.call('todoread', '{}')->>'output';
-- replace: Ship done, a new item in the middle, "Tell the team" dropped, ids kept
SELECT todo.call('todowrite', '{"todos": [
  {"content": "Write tests", "status": "completed", "priority": "high", "id": "1"},
  {"content": "Fix the flaky test", "status": "in_progress", "priority": "high"},
  {"content": "Ship", "status": "cancelled", "priority": "medium"}]}')->>'title';
SELECT todo.call('todoread', '{}')->>'output';
SELECT id, subject, status, version FROM todo.todos ORDER BY id;
-- an item moved back from completed to in_progress goes through pending (a reopen)
SELECT todo.call('todowrite', '{"todos": [
  {"content": "Write tests", "status": "in_progress", "priority": "high", "id": "1"},
  {"content": "Fix the flaky test", "status": "completed", "priority": "high"},
  {"content": "Ship", "status": "cancelled", "priority": "medium"}]}')->>'title';
SELECT todo_id, version, old_status, new_status FROM todo.events WHERE todo_id = 1 ORDER BY version;
-- ACP plan entries: in_progress shown by its active form when it has one; cancelled shown completed
UPDATE todo.todos SET active_form = 'Writing tests' WHERE id = 1;
SELECT jsonb_pretty(todo.acp_plan('ses_1'));
-- shared/reference/acp-plan-from-claude-todowrite.json: Claude Code's TodoWrite input (seed
-- 003's shape) becomes exactly the ACP v1 entries an ACP adapter sends
SELECT todo.set_context('acme', 'ses_claude', 'claude') \gset
SELECT todo.call('todolist__set', '{"todos": [
      {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
      {"content": "Ship", "status": "pending", "activeForm": "Shipping"}]}') IS NOT NULL AS set;
SELECT todo.acp_plan('ses_claude') = '{"entries": [
          {"content": "Writing tests", "priority": "medium", "status": "in_progress"},
          {"content": "Ship", "priority": "medium", "status": "pending"}],
        "sessionUpdate": "plan"}' AS matches_reference;
SELECT todo.set_context('acme', 'ses_1', 'build') \gset
-- an empty list empties the session
SELECT todo.call('todowrite', '{"todos": []}');
SELECT count(*) FROM todo.todos WHERE conversation_id = 'ses_1';
-- no session
SELECT todo.set_context('acme') \gset
SELECT todo.call('todoread', '{}');
rollback;
