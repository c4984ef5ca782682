-- tools_tasks: seed 004's task tools (ListTasks, AddTask, CompleteTask, UncompleteTask,
-- DeleteTask) with its results and error strings, and import/export of its task file.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'smallebot') \gset
SELECT todo.call('ListTasks', '{}');
SELECT todo.call('AddTask', '{"title": "Implement API", "description": "Add GET /api/items endpoint"}');
SELECT todo.call('AddTask', '{"title": "Add tests"}');
SELECT todo.call('CompleteTask', '{"taskId": "2"}');
SELECT todo.call('ListTasks', '{}');
-- the seed's file, exactly
SELECT todo.export_tasks('conv-1') = '{"tasks": [
    { "id": "1", "title": "Implement API", "description": "Add GET /api/items endpoint", "done": false },
    { "id": "2", "title": "Add tests", "description": "", "done": true }]}' AS matches_seed_file;
SELECT todo.call('UncompleteTask', '{"taskId": "2"}');
SELECT todo.call('UncompleteTask', '{"taskId": "2"}');
SELECT todo.call('DeleteTask', '{"taskId": "1"}');
-- not found, every tool the same
SELECT todo.call('CompleteTask', '{"taskId": "1"}');
SELECT todo.call('UncompleteTask', '{"taskId": "99"}');
SELECT todo.call('DeleteTask', '{"taskId": "not-an-id"}');
SELECT todo.call('AddTask', '{"title": " "}');
-- import: ids that name tasks update them, others are added, the rest are removed
SELECT todo.import_tasks('conv-1', '{"tasks": [
    {"id": "2", "title": "Add tests", "description": "unit and integration", "done": true},
    {"id": "9f1c2b", "title": "Write the changelog", "description": "", "done": false}],
  "title": "an extra top-level field is fine"}');
SELECT todo.import_tasks('conv-2', '{"tasks": []}');
-- a corrupt file is an error and changes nothing
SELECT todo.import_tasks('conv-1', '{"items": []}');
SELECT todo.import_tasks('conv-1', '{"tasks": [{"title": "x"}]}');
SELECT todo.import_tasks('conv-1', '[1, 2]');
SELECT todo.export_tasks('conv-1');
-- no conversation: the seed's error string
SELECT todo.set_context('acme') \gset
SELECT todo.call('ListTasks', '{}');
SELECT todo.call('AddTask', '{"title": "x"}');
rollback;
