-- bench/load.sql: the benchmark data set, in the extension's tables and in plain tables of
-- the same shape (schema "plain": what a user would write by hand, no triggers, no RLS).
-- :tenants tenants × 20 conversations × 50 todos, a mix of statuses; per tenant, also 5
-- conversations "list-N" of 10 todos for the whole-list replace scripts.
-- Loaded with the extension's row triggers disabled (a bulk load, as a restore would be):
-- counters and insert events are written in bulk here instead.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_todos;
INSERT INTO todo.tenants (tenant_id) SELECT 't' || g FROM generate_series(1, :tenants) g;

CREATE TEMP TABLE seed AS
SELECT 't' || t AS tenant_id, (c - 1) * 50 + k AS id, 'c' || c AS conversation_id,
       'todo ' || c || '-' || k || ' of tenant ' || t AS subject,
       CASE WHEN k % 10 = 0 THEN 'in_progress' WHEN k % 5 = 0 THEN 'completed' WHEN k % 7 = 0 THEN 'canceled' ELSE 'pending' END AS status,
       (c - 1) * 50 + k AS position
  FROM generate_series(1, :tenants) t, generate_series(1, 20) c, generate_series(1, 50) k
UNION ALL
SELECT 't' || t, 1000 + (l - 1) * 10 + k, 'list-' || l, 'list item ' || k, 'pending', 1000 + (l - 1) * 10 + k
  FROM generate_series(1, :tenants) t, generate_series(1, 5) l, generate_series(1, 10) k;

ALTER TABLE todo.todos DISABLE TRIGGER USER;
INSERT INTO todo.todos (tenant_id, id, conversation_id, subject, status, position, agent_id,
                        started_at, completed_at)
SELECT tenant_id, id, conversation_id, subject, status, position, 'loader',
       CASE WHEN status = 'in_progress' THEN now() END,
       CASE WHEN status IN ('completed', 'canceled') THEN now() END
  FROM seed;
ALTER TABLE todo.todos ENABLE TRIGGER USER;
INSERT INTO todo.counters SELECT tenant_id, max(id) FROM seed GROUP BY tenant_id;
INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id, agent_id, new_status)
SELECT tenant_id, id, 1, 'insert', conversation_id, 'loader', status FROM seed;

-- the hand-written alternative: the same columns and indexes, a counter, an event log; no
-- triggers, no RLS; the row rules as the CHECK constraints a user would declare (pg_todos'
-- trigger checks them)
CREATE SCHEMA plain;
CREATE TABLE plain.todos (LIKE todo.todos INCLUDING DEFAULTS,
  CHECK (id > 0), CHECK (conversation_id <> ''), CHECK (btrim(subject) <> ''),
  CHECK (status IN ('pending', 'in_progress', 'completed', 'canceled', 'blocked', 'deferred', 'review')),
  CHECK (priority IN ('high', 'medium', 'low')), CHECK (jsonb_typeof(metadata) = 'object'),
  CHECK (external_id <> ''), CHECK (archived_at IS NULL OR completed_at IS NOT NULL),
  CHECK ((completed_at IS NOT NULL) = (status IN ('completed', 'canceled'))), CHECK (parent_id <> id),
  CHECK ((claimed_by IS NULL) = (lease_expires_at IS NULL) AND (claimed_by IS NULL OR status = 'in_progress')));
ALTER TABLE plain.todos ALTER tenant_id DROP DEFAULT, ALTER conversation_id DROP DEFAULT,
  ALTER turn_id DROP DEFAULT, ALTER agent_id DROP DEFAULT;
ALTER TABLE plain.todos ADD PRIMARY KEY (tenant_id, id);
CREATE INDEX ON plain.todos (tenant_id, conversation_id, status, position);
CREATE INDEX ON plain.todos (tenant_id, status, updated_at DESC);
CREATE INDEX ON plain.todos (tenant_id, parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX ON plain.todos (tenant_id, conversation_id, position, id)
  WHERE status IN ('pending', 'in_progress', 'blocked', 'deferred', 'review');
CREATE INDEX ON plain.todos (tenant_id, conversation_id, (CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END), position, id)
  WHERE status = 'pending';
CREATE INDEX ON plain.todos (tenant_id, conversation_id) WHERE status = 'in_progress' AND claimed_by IS NOT NULL;
CREATE UNIQUE INDEX ON plain.todos (tenant_id, conversation_id, external_id) WHERE external_id IS NOT NULL;
CREATE TABLE plain.counters (tenant_id text PRIMARY KEY, last_id bigint NOT NULL);
CREATE TABLE plain.dependencies (LIKE todo.dependencies INCLUDING DEFAULTS);
ALTER TABLE plain.dependencies ADD PRIMARY KEY (tenant_id, todo_id, depends_on);
CREATE TABLE plain.events (LIKE todo.events INCLUDING DEFAULTS);
ALTER TABLE plain.events ADD PRIMARY KEY (tenant_id, todo_id, version);
-- the floor: a bare insert into a table with an identity id
CREATE TABLE plain.bare (LIKE plain.todos INCLUDING DEFAULTS);
ALTER TABLE plain.bare DROP COLUMN id, ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY, ALTER position DROP NOT NULL;
INSERT INTO plain.todos SELECT * FROM todo.todos;
INSERT INTO plain.counters SELECT * FROM todo.counters;
INSERT INTO plain.events SELECT * FROM todo.events;
SELECT 'CREATE ROLE bench_agent LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_agent') \gexec
SELECT todo.grant_usage('bench_agent');
GRANT USAGE ON SCHEMA plain TO bench_agent;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA plain TO bench_agent;
VACUUM ANALYZE;
