#!/usr/bin/env bash
# upgrade: a database created at each released version (every frozen sql/pg_todos--X.sql: bin/lib/released.sh) and updated with
# ALTER EXTENSION pg_todos UPDATE keeps all its data, ends with exactly the objects of a fresh
# install of this version, and passes the same pg_regress suite as a fresh install.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_UPGRADE_PORT:-54320}
bin/install
. bin/lib/released.sh
. bin/lib/throwaway.sh
throwaway upgrade "$PORT"
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
passed=0; failed=0
CURRENT=$(bin/version)
check() { if "${@:2}"; then passed=$((passed + 1)); echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi; }

createdb fresh
q -d fresh -c "CREATE EXTENSION pg_todos"

# every object of the schema, with its definition, its privileges and its comment
objects() {
  q -d "$1" <<'SQL'
SELECT 'function ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '')
       || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
  FROM pg_proc p WHERE p.pronamespace = 'todo'::regnamespace
UNION ALL
SELECT 'relation ' || c.oid::regclass || ' ' || c.relkind::text || ' ' || c.relrowsecurity::text || c.relforcerowsecurity::text
       || ' ' || coalesce(c.relacl::text, '') || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '')
  FROM pg_class c WHERE c.relnamespace = 'todo'::regnamespace
UNION ALL
SELECT 'column ' || a.attrelid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
       || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(col_description(a.attrelid, a.attnum), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relnamespace = 'todo'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'todo'::regnamespace
UNION ALL
SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
 WHERE c.relnamespace = 'todo'::regnamespace
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
   AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'todo'::regnamespace)
UNION ALL
SELECT 'policy ' || schemaname || '.' || tablename || ' ' || policyname || ' ' || cmd || ' ' || roles::text || ' '
       || coalesce(qual, '') || ' ' || coalesce(with_check, '')
  FROM pg_policies WHERE schemaname = 'todo'
UNION ALL
SELECT 'config ' || unnest(extconfig)::regclass FROM pg_extension WHERE extname = 'pg_todos'
ORDER BY 1
SQL
}
objects fresh >/tmp/pg_todos-objects-fresh.txt

# data written at the old version, through its tables and row triggers. (This library's
# surfaces expect the current schema: a database is updated with ALTER EXTENSION pg_todos
# UPDATE right after the library is installed. The old error policy hid that: an add on a
# 0.1.0 schema answered "ERR: column parent_id does not exist".)
seed() {
  q -d "$1" >/dev/null <<'SQL'
INSERT INTO todo.tenants VALUES ('acme', 'Acme'), ('globex', 'Globex');
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1');
INSERT INTO todo.todos (tenant_id, conversation_id, subject) VALUES ('acme', 'conv-1', 'review the deploy');
INSERT INTO todo.todos (tenant_id, conversation_id, subject, description)
VALUES ('acme', 'conv-1', 'write the post-mortem', 'body');
UPDATE todo.todos SET status = 'in_progress' WHERE tenant_id = 'acme' AND id = 1;
INSERT INTO todo.todos (tenant_id, conversation_id, turn_id, subject) VALUES ('acme', 'conv-1', 'turn-1', 'plan step');
UPDATE todo.todos SET status = 'completed', active_form = 'Reviewing' WHERE tenant_id = 'acme' AND id = 1;
INSERT INTO todo.todos (tenant_id, conversation_id, subject) VALUES ('acme', NULL, 'pool item');
SELECT todo.set_context('globex', 'conv-9', 'bot');
INSERT INTO todo.todos (tenant_id, conversation_id, subject, description) VALUES ('globex', 'conv-9', 'globex task', '');
COMMIT;
SQL
}
# the rows as the old version knew them (columns added since are compared by the objects check)
snapshot() {
  q -d "$1" <<'SQL'
SELECT 'tenants', md5(string_agg(t::text, '|' ORDER BY tenant_id)) FROM todo.tenants t;
SELECT 'counters', md5(string_agg(c::text, '|' ORDER BY tenant_id)) FROM todo.counters c;
SELECT 'todos', count(*), md5(string_agg(row(tenant_id, id, conversation_id, turn_id, agent_id, subject, description,
       active_form, status, priority, position, completion_criteria, agent_type, outcome, version, created_at,
       updated_at, started_at, completed_at)::text, '|' ORDER BY tenant_id, id)) FROM todo.todos t;
SELECT 'events', count(*), md5(string_agg(row(tenant_id, todo_id, version, action, conversation_id, agent_id, turn_id,
       old_status, new_status, changes, event_at)::text, '|' ORDER BY tenant_id, todo_id, version)) FROM todo.events e;
SQL
}

for from in $RELEASED; do
  db="from_${from//./_}"
  createdb "$db"
  q -d "$db" -c "CREATE EXTENSION pg_todos VERSION '$from'"
  seed "$db"
  before=$(snapshot "$db")
  q -d "$db" -c "ALTER EXTENSION pg_todos UPDATE"
  after=$(snapshot "$db")
  check "$from: the update reaches $CURRENT" \
    test "$(q -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'")" = "$CURRENT"
  check "$from: every tenant, counter, todo and event survives the update" test "$before" = "$after"
  check "$from: the data was there to survive" grep -q '^todos|5|' <<<"$after"
  check "$from: the invariants hold after the update" test -z "$(q -d "$db" -c 'SELECT * FROM todo.verify()')"
  objects "$db" >"/tmp/pg_todos-objects-$from.txt"
  check "$from: an upgraded database has exactly the objects of a fresh install" \
    diff -u /tmp/pg_todos-objects-fresh.txt "/tmp/pg_todos-objects-$from.txt"
  deep=$(q -d "$db" <<'SQL'
BEGIN;
SELECT todo.set_context('acme', 'conv-1') \g /dev/null
SELECT todo.call('todowrite', ('{"todos": ' || repeat('[', 300) || repeat(']', 300) || '}')::jsonb)->'error'->>'code';
COMMIT;
SQL
)
  check "$from: the upgraded database works: deep nesting is an error object" test "$deep" = invalid_arguments
  # the old rows take part in the new features: claim one, block another on it
  coord=$(q -d "$db" <<'SQL'
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent-x') \g /dev/null
SELECT todo.todo_writ(format(E'/todo block %s on %s\n/todo claim %s\n/todo list', pool, pm, pm))
  FROM (SELECT max(id) FILTER (WHERE subject = 'pool item') AS pool,
               max(id) FILTER (WHERE subject = 'write the post-mortem') AS pm
          FROM todo.todos WHERE tenant_id = 'acme') ids;
ROLLBACK;
SQL
)
  check "$from: an old todo can be claimed after the update" grep -q "OK: claimed #.* — write the post-mortem" <<<"$coord"
  check "$from: an old todo can wait for another after the update" grep -q 'pool item (blocked by #' <<<"$coord"
  # an app role granted by the old version (each has todo.grant_usage(regrole)), in a database
  # of its own: its grants would differ from a fresh install's objects
  old_role="old_app_${from//./_}"
  createdb "${db}_role"
  q -d "${db}_role" -c "CREATE EXTENSION pg_todos VERSION '$from'" -c "CREATE ROLE $old_role" \
    -c "SELECT todo.grant_usage('$old_role')" -c "ALTER EXTENSION pg_todos UPDATE" >/dev/null
  regranted=$(q -d "${db}_role" <<SQL
SELECT (SELECT tenant_id IS NULL AND plain_sql FROM todo.roles WHERE role = '$old_role'::regrole),
       has_function_privilege('$old_role', 'todo.todo_writ(text)', 'EXECUTE'),
       has_table_privilege('$old_role', 'todo.todos', 'UPDATE'),
       has_table_privilege('$old_role', 'todo.events', 'INSERT'),
       has_table_privilege('$old_role', 'todo.counters', 'UPDATE');
SQL
)
  dropdb "${db}_role"
  q -c "DROP ROLE $old_role" >/dev/null
  check "$from: a role the old version granted is granted again: an app role, its functions, no writes of events or counters" \
    test "$regranted" = "t|t|t|f|f"
done
echo "$passed passed, $failed failed"
bin/cluster stop upgrade
trap - EXIT

# the same suite as a fresh install, on databases created at each released version and updated
for from in $RELEASED; do
  echo "==> pg_regress on a database upgraded from $from"
  PGTODOS_UPGRADE_FROM=$from bin/installcheck || failed=$((failed + 1))
done
[ "$failed" -eq 0 ]
