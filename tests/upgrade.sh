#!/usr/bin/env bash
# upgrade: a database created at 0.1.0 and updated with ALTER EXTENSION pg_todos UPDATE keeps
# all its data, ends with exactly the objects of a fresh 0.2.0 install, and passes the same
# pg_regress suite as a fresh install.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_UPGRADE_PORT:-54320}
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
cargo pgrx install --pg-config "$PG_CONFIG" >/tmp/pg_todos-install.log 2>&1 \
  || { cat /tmp/pg_todos-install.log >&2; exit 1; }
cp sql/pg_todos--0.1.0.sql sql/pg_todos--0.2.0.sql "$($PG_CONFIG --sharedir)/extension/"
bin/cluster destroy upgrade
bin/cluster start upgrade "$PORT"
trap 'bin/cluster stop upgrade' EXIT
eval "$(bin/cluster env upgrade "$PORT")"
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
passed=0; failed=0
check() { if "${@:2}"; then passed=$((passed + 1)); echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi; }

createdb fresh
q -d fresh -c "CREATE EXTENSION pg_todos"
createdb old
q -d old -c "CREATE EXTENSION pg_todos VERSION '0.1.0'"
# data written at 0.1.0, through every surface
q -d old >/dev/null <<'SQL'
INSERT INTO todo.tenants VALUES ('acme', 'Acme'), ('globex', 'Globex');
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'supervisor', 'turn-1');
SELECT todo.todo_writ(E'/todo add review the deploy\n/todo add write the post-mortem\nbody\n/endtodo\n/todo start 1');
SELECT todo.call('create_todo', '{"items": [{"title": "plan step"}]}');
SELECT todo.call('todolist__set', '{"todos": [{"content": "review the deploy", "status": "completed", "activeForm": "Reviewing"}, {"content": "write the post-mortem", "status": "in_progress", "activeForm": "Writing"}]}');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "pool item", "conversation_id": null}');
SELECT todo.set_context('globex', 'conv-9', 'bot');
SELECT todo.call('AddTask', '{"title": "globex task"}');
COMMIT;
SQL
snapshot() {
  q -d "$1" <<'SQL'
SELECT 'tenants', md5(string_agg(t::text, '|' ORDER BY tenant_id)) FROM todo.tenants t;
SELECT 'counters', md5(string_agg(c::text, '|' ORDER BY tenant_id)) FROM todo.counters c;
SELECT 'todos', count(*), md5(string_agg(t::text, '|' ORDER BY tenant_id, id)) FROM todo.todos t;
SELECT 'events', count(*), md5(string_agg(e::text, '|' ORDER BY tenant_id, todo_id, version)) FROM todo.events e;
SQL
}
before=$(snapshot old)
q -d old -c "ALTER EXTENSION pg_todos UPDATE"
after=$(snapshot old)
check "the update reaches 0.2.0" test "$(q -d old -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'")" = 0.2.0
check "every tenant, counter, todo and event survives the update" test "$before" = "$after"
check "the data was there to survive" grep -q '^todos|4|' <<<"$after"
check "the invariants hold after the update" test -z "$(q -d old -c 'SELECT * FROM todo.verify()')"

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
objects old >/tmp/pg_todos-objects-upgraded.txt
check "an upgraded database has exactly the objects of a fresh install" \
  diff -u /tmp/pg_todos-objects-fresh.txt /tmp/pg_todos-objects-upgraded.txt
deep=$(q -d old <<'SQL'
BEGIN;
SELECT todo.set_context('acme', 'conv-1') \g /dev/null
SELECT todo.call('todowrite', ('{"todos": ' || repeat('[', 300) || repeat(']', 300) || '}')::jsonb)->'error'->>'code';
COMMIT;
SQL
)
check "the upgraded database works: deep nesting is an error object" test "$deep" = invalid_arguments
echo "$passed passed, $failed failed"
bin/cluster stop upgrade
trap - EXIT

# the same suite as a fresh install, on a database created at 0.1.0 and updated
echo "==> pg_regress on a database upgraded from 0.1.0"
PGTODOS_UPGRADE_FROM=0.1.0 bin/installcheck
[ "$failed" -eq 0 ]
