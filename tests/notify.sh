#!/usr/bin/env bash
# notify: every committed call of a pg_todos function that writes sends one notification on
# the tenant's channel (todo.channel()), carrying ids only; a write by plain SQL sends one per
# row (the row trigger), once committed; a rolled-back write sends nothing,
# and a listener on another tenant's channel hears nothing. Two psql sessions: a listener
# and a writer; the listener's output is compared with the expected notifications.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_NOTIFY_PORT:-54319}
. bin/lib/throwaway.sh
throwaway notify "$PORT"
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
createdb notify
q -d notify <<'SQL' >/dev/null
CREATE EXTENSION pg_todos;
INSERT INTO todo.tenants VALUES ('acme'), ('globex');
SQL
channel_of() {
  printf "BEGIN \\g /dev/null\nSELECT set_config('todo.tenant', '%s', true) \\g /dev/null\nSELECT todo.channel();\nCOMMIT \\g /dev/null\n" "$1" | q -d notify
}
chan_acme=$(channel_of acme)
chan_globex=$(channel_of globex)

out=$(mktemp)
# The listener: LISTEN on both channels, then poll (a notification is printed after the
# next statement) until the writer has finished.
{
  echo "LISTEN \"$chan_acme\";"
  echo "LISTEN \"$chan_globex\";"
  for _ in $(seq 1 40); do echo "SELECT pg_sleep(0.1);"; done
} | psql -X -q -At -d notify >"$out" 2>&1 &
listener=$!
sleep 1

q -d notify >/dev/null <<'SQL'
-- committed: the writ (two commands, one notification with both ids)
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ(E'/todo add one\n/todo add two');
COMMIT;
-- rolled back: nothing
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ('/todo add never committed');
SELECT todo.call('todowrite', '{"todos": []}');
ROLLBACK;
-- committed: a whole-list replace (one notification with every id it touched)
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.call('todowrite', '{"todos": [{"content": "one", "status": "completed", "priority": "high"}, {"content": "three", "status": "pending", "priority": "low"}]}');
COMMIT;
-- committed: a REST delete of a tenant-wide todo
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.rest('POST', '/v1/todos', '{"subject": "pool", "conversation_id": null}');
COMMIT;
-- plain SQL: the row trigger notifies for each row changed, after commit only
BEGIN;
SELECT todo.set_context('globex', 'conv-9', 'agent');
INSERT INTO todo.todos (subject) VALUES ('by SQL one'), ('by SQL two');
COMMIT;
BEGIN;
SELECT todo.set_context('globex', 'conv-9', 'agent');
INSERT INTO todo.todos (subject) VALUES ('rolled back');
ROLLBACK;
BEGIN;
SELECT todo.set_context('globex');
UPDATE todo.todos SET status = 'completed' WHERE subject = 'by SQL two';
COMMIT;
-- a failed command writes nothing and notifies nothing
BEGIN;
SELECT todo.set_context('acme', 'conv-1', 'agent');
SELECT todo.todo_writ('/todo done 999');
COMMIT;
SQL
wait "$listener" || true
got=$(sed -n 's/^Asynchronous notification "\([^"]*\)" with payload "\(.*\)" received from server process with PID [0-9]*\.$/\1 \2/p' "$out" \
      | sed "s/$chan_acme/acme/; s/$chan_globex/globex/")
expected='acme {"conversation_id":"conv-1","ids":[1,2]}
acme {"conversation_id":"conv-1","ids":[1,3,2]}
acme {"conversation_id":null,"ids":[4]}
globex {"conversation_id":"conv-9","ids":[1]}
globex {"conversation_id":"conv-9","ids":[2]}
globex {"conversation_id":"conv-9","ids":[2]}'
rm -f "$out"
if [ "$got" = "$expected" ]; then
  echo "ok: notifications after commit (per call, or per row of plain SQL), none after rollback, none on another tenant's channel"
  echo "1 passed, 0 failed"
else
  printf 'FAILED: notifications\n--- expected\n%s\n--- got\n%s\n' "$expected" "$got"
  echo "0 passed, 1 failed"
  exit 1
fi
