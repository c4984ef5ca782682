-- fields: the trackers' fields as columns of their own (labels, issue_type, due_at, notes,
-- plan): written by plain SQL, logged in todo.events like every column, held to the limits.
begin;
\set ON_ERROR_ROLLBACK on
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT FROM todo.set_context('acme', 'conv-f', 'planner', 'turn-1');
INSERT INTO todo.todos (subject, labels, issue_type, due_at, notes, plan)
VALUES ('ship the parser', '{backend,urgent}', 'bug', '2026-12-01 12:00+00', 'seen on main', 'split the lexer first')
RETURNING id, labels, issue_type, due_at, notes, plan;
UPDATE todo.todos SET labels = '{backend}', due_at = NULL, notes = 'fixed on a branch' WHERE subject = 'ship the parser';
SELECT action, changes FROM todo.events WHERE tenant_id = 'acme' ORDER BY version;
-- the limits: labels by their size in bytes (todo.max_metadata_size), issue_type as a name,
-- notes and plan as text; each refusal names the column and the setting
SET LOCAL todo.max_metadata_size = 1024;
UPDATE todo.todos SET labels = array_fill('x'::text, ARRAY[300]) WHERE subject = 'ship the parser';
UPDATE todo.todos SET issue_type = repeat('t', 257) WHERE subject = 'ship the parser';
UPDATE todo.todos SET notes = repeat('n', 20001) WHERE subject = 'ship the parser';
UPDATE todo.todos SET plan = repeat('p', 20001) WHERE subject = 'ship the parser';
SELECT labels, issue_type, length(notes) AS notes, plan FROM todo.todos WHERE subject = 'ship the parser';
rollback;
