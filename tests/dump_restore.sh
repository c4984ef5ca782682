#!/usr/bin/env bash
# dump_restore: user data survives pg_dump / pg_restore. Seeds a database, dumps it in custom
# format, restores into a fresh database, and checks that every tenant, todo, counter and
# event came back unchanged and that the restored store keeps working (next id, triggers).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_DUMP_PORT:-54317}
. bin/lib/throwaway.sh
throwaway dump "$PORT"
work=$(mktemp -d); chmod 755 "$work"
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

createdb src
psql_q -d src >/dev/null <<'SQL'
CREATE EXTENSION pg_todos;
INSERT INTO todo.tenants (tenant_id, name) VALUES ('acme', 'Acme'), ('globex', 'Globex');
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'planner', 'turn-1');
INSERT INTO todo.todos (subject, description) VALUES ('one', E'multi\nline'), ('two', NULL), ('three', NULL);
INSERT INTO todo.todos (conversation_id, subject, priority) VALUES (NULL, 'tenant-wide', 'high');
UPDATE todo.todos SET status = 'in_progress' WHERE id = 1;
UPDATE todo.todos SET status = 'completed', outcome = 'done' WHERE id = 1;
UPDATE todo.todos SET status = 'cancelled' WHERE id = 2;
DELETE FROM todo.todos WHERE id = 3;
-- a subtask stored before its parent (the parent's update moves it to the end of the heap),
-- a dependency and a live claim
INSERT INTO todo.todos (subject) VALUES ('parent');
INSERT INTO todo.todos (subject, parent_id) VALUES ('child', 5);
UPDATE todo.todos SET description = 'moved' WHERE id = 5;
SELECT todo.block(6, 4);
SELECT id, fence FROM todo.claim(4);
SELECT todo.set_context('globex', NULL, 'bot');
INSERT INTO todo.todos (subject) VALUES ('globex one');
COMMIT;
-- a bearer token of the HTTP service, and a revoked one
SELECT count(*) FROM todo.create_token('acme', 'Ada');
SELECT todo.revoke_token(token_id) FROM todo.create_token('acme', 'old');
SQL
pg_dump -Fc -d src -f "$work/src.dump"
createdb dst
pg_restore -d dst --exit-on-error "$work/src.dump"

snapshot() {
  psql_q -At -d "$1" <<'SQL'
SELECT 'tenants', md5(string_agg(t::text, '|' ORDER BY tenant_id)) FROM todo.tenants t;
SELECT 'counters', md5(string_agg(c::text, '|' ORDER BY tenant_id)) FROM todo.counters c;
SELECT 'todos', count(*), md5(string_agg(t::text, '|' ORDER BY tenant_id, id)) FROM todo.todos t;
SELECT 'events', count(*), md5(string_agg(e::text, '|' ORDER BY tenant_id, todo_id, version)) FROM todo.events e;
SELECT 'dependencies', count(*), md5(string_agg(d::text, '|' ORDER BY tenant_id, todo_id, depends_on)) FROM todo.dependencies d;
SELECT 'tokens', count(*), md5(string_agg(k::text, '|' ORDER BY token_id)) FROM todo.tokens k;
SQL
}
snapshot src >"$work/src.txt"
snapshot dst >"$work/dst.txt"
failed=0; passed=0
check() { # name, command...
  if "${@:2}"; then passed=$((passed + 1)); echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi
}
check "restored tenants, counters, todos, events and tokens are identical" diff -u "$work/src.txt" "$work/dst.txt"
check "the seed really had rows" grep -q '^todos|6|' "$work/dst.txt"
check "the seed really had a dependency" grep -q '^dependencies|1|' "$work/dst.txt"

# The restored store works: ids continue after the highest ever given (7), triggers fire,
# the claim and the dependency hold, RLS policies are back.
after=$(psql_q -At -d dst <<'SQL'
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'worker') \gset
INSERT INTO todo.todos (subject) VALUES ('after restore') RETURNING id;
UPDATE todo.todos SET status = 'in_progress' WHERE id = 5 RETURNING status, started_at IS NOT NULL;
SELECT count(*) FROM todo.events WHERE todo_id = 7;
SELECT todo.todo_writ('/todo claim 4');
SELECT todo.todo_writ('/todo list');
COMMIT;
SELECT relname || ':' || relforcerowsecurity FROM pg_class WHERE relnamespace = 'todo'::regnamespace AND relkind = 'r' ORDER BY 1;
SQL
)
after=$(sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/TIME/' <<<"$after")
expected="7
in_progress|t
1
[/todo claim 4]
ERR: #4 is claimed by planner until TIME — /todo ready lists the todos you can claim
[END TODO]
[/todo list]
4 open (2 in progress, 2 pending):
▶ #4 [in_progress] tenant-wide (claimed by planner) (tenant-wide)
▶ #5 [in_progress] parent (0/1 done)
#6 [pending] child (blocked by #4)
#7 [pending] after restore
[END TODO]
counters:true
dependencies:true
distribution:true
events:true
id_ranges:true
locks:true
roles:true
tenants:true
todos:true
tokens:true"
check "the restored store keeps working" test "$after" = "$expected"
[ "$after" = "$expected" ] || printf 'got:\n%s\nexpected:\n%s\n' "$after" "$expected"
rm -rf "$work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
