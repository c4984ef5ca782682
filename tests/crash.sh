#!/usr/bin/env bash
# crash: SIGKILL the postmaster in the middle of a write load (fsync and synchronous_commit
# on), restart, and check that every write a client saw acknowledged is there and that
# amcheck finds no corruption. About 20 s.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_CRASH_PORT:-54322}
. bin/lib/throwaway.sh
throwaway crash "$PORT"
data=$(dirname "$PGHOST")/data
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" -c "CREATE DATABASE crash"
bin/cluster stop crash && bin/cluster start crash "$PORT"
agent_database crash crash
test "$(psql -X -At -d crash -c 'SHOW fsync')" = on
acks=$(mktemp)
python3 tests/crash.py load crash 6 "$acks" &
loader=$!
sleep 3
pid=$(head -1 "$data/postmaster.pid")
echo "==> SIGKILL postmaster $pid in the middle of the load"
kill -9 "$pid"
wait "$loader"
# the backends notice the postmaster is gone and exit; then the cluster can start again
for _ in $(seq 1 100); do pgrep -f "postgres: .*crash" >/dev/null || pgrep -u postgres -f "$data" >/dev/null || break; sleep 0.1; done
sleep 1
bin/cluster start crash "$PORT"
grep -E "database system was interrupted|redo (starts|done)" "$(dirname "$PGHOST")/postgres.log" | sed 's/^.*LOG:/LOG:/' | head -3 || true
python3 tests/crash.py check crash "$acks"
rm -f "$acks"
