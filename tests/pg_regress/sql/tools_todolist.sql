-- tools_todolist: seed 003's MCP toolset todolist__get / todolist__set. The seed's example
-- session reproduced exactly (compared as JSON), every error code, and validation that
-- rejects the whole payload and writes nothing.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'session-1', 'claude') \gset
-- the seed's Example Session, step by step: each output equals the seed's
SELECT todo.call('todolist__set', '{"todos": [
      { "content": "Run build", "status": "in_progress", "activeForm": "Running build" },
      { "content": "Fix errors", "status": "pending", "activeForm": "Fixing errors" },
      { "content": "Run tests", "status": "pending", "activeForm": "Running tests" }]}')
  = '{ "summary": { "total": 3, "pending": 2, "in_progress": 1, "completed": 0 } }' AS step_1;
SELECT todo.call('todolist__set', '{"todos": [
      { "content": "Run build", "status": "completed", "activeForm": "Running build" },
      { "content": "Fix errors", "status": "in_progress", "activeForm": "Fixing errors" },
      { "content": "Run tests", "status": "pending", "activeForm": "Running tests" }]}')
  = '{ "summary": { "total": 3, "pending": 1, "in_progress": 1, "completed": 1 } }' AS step_2;
SELECT todo.call('todolist__set', '{"todos": [
      { "content": "Run build", "status": "completed", "activeForm": "Running build" },
      { "content": "Fix errors", "status": "completed", "activeForm": "Fixing errors" },
      { "content": "Run tests", "status": "in_progress", "activeForm": "Running tests" }]}')
  = '{ "summary": { "total": 3, "pending": 0, "in_progress": 1, "completed": 2 } }' AS step_3;
SELECT todo.call('todolist__set', '{"todos": [
      { "content": "Run build", "status": "completed", "activeForm": "Running build" },
      { "content": "Fix errors", "status": "completed", "activeForm": "Fixing errors" },
      { "content": "Run tests", "status": "completed", "activeForm": "Running tests" }]}')
  = '{ "summary": { "total": 3, "pending": 0, "in_progress": 0, "completed": 3 } }' AS step_4;
-- the same three rows all along: identity kept, one event per real change
SELECT id, subject, status, active_form, version FROM todo.todos ORDER BY id;
-- the seed's todolist__get example
SELECT todo.call('todolist__set', '{"todos": [
    { "content": "Run build", "status": "completed", "activeForm": "Running build" },
    { "content": "Fix errors", "status": "in_progress", "activeForm": "Fixing errors" },
    { "content": "Run tests", "status": "pending", "activeForm": "Running tests" }]}') IS NOT NULL AS set;
SELECT todo.call('todolist__get', '{}') = '{
  "todos": [
    { "content": "Run build", "status": "completed", "activeForm": "Running build" },
    { "content": "Fix errors", "status": "in_progress", "activeForm": "Fixing errors" },
    { "content": "Run tests", "status": "pending", "activeForm": "Running tests" }
  ],
  "summary": { "total": 3, "pending": 1, "in_progress": 1, "completed": 1 }
}' AS get_matches_seed;
-- the seed's Initial planning example, from an empty session
SELECT todo.set_context('acme', 'session-2', 'claude') \gset
SELECT todo.call('todolist__set', '{"todos": [
    { "content": "Run build", "status": "pending", "activeForm": "Running build" },
    { "content": "Fix errors", "status": "pending", "activeForm": "Fixing errors" },
    { "content": "Run tests", "status": "pending", "activeForm": "Running tests" }]}')
  = '{ "summary": { "total": 3, "pending": 3, "in_progress": 0, "completed": 0 } }' AS initial_planning;
-- every error code; the whole payload is rejected and nothing is written
SELECT todo.call('todolist__set', '{"todos": [{"content": "   ", "status": "pending", "activeForm": "Doing"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "Do", "status": "pending", "activeForm": ""}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "A", "status": "in_progress", "activeForm": "A-ing"}, {"content": "B", "status": "in_progress", "activeForm": "B-ing"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "A", "status": "done", "activeForm": "A-ing"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "A", "status": "cancelled", "activeForm": "A-ing"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "ok", "status": "pending", "activeForm": "ok"}, {"content": "", "status": "pending", "activeForm": "x"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "A", "status": "pending"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "A", "status": "pending", "activeForm": "A-ing", "id": 1}]}');
SELECT todo.call('todolist__set', '{}');
SELECT todo.call('todolist__get', '{}') -> 'summary' AS unchanged;
-- no session
SELECT todo.set_context('acme') \gset
SELECT todo.call('todolist__get', '{}');
rollback;
