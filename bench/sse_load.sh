#!/usr/bin/env bash
# sse_load: `pg_todos serve` (release build) on a throwaway cluster (.cluster/sseload, on its
# Unix socket) with 100 SSE clients connected while REST writes run at a
# steady 20/s for 30 s, all on loopback. Proves no request or stream fails and every client
# sees every written todo; reports the server's RSS (first/last/max) and p50/p99 from commit
# to event receipt as a Markdown table (bench/sse_load.py), and writes it as the "HTTP service"
# section of bench/results.md.
# Quick run: SSE_SECONDS=5 SSE_CLIENTS=20 bench/sse_load.sh   (SSE_RATE sets the writes/s;
# SSE_FEEDS="log logical" the service's --feed, each run in turn)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
cargo build --release -p pg_todos_cli >/tmp/pg_todos-sse-build.log 2>&1 || { cat /tmp/pg_todos-sse-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway sseload
# the logical feed decodes a replication slot: wal_level = logical (a restart)
psql -X -q -d postgres -c "ALTER SYSTEM SET wal_level = logical" -c "ALTER SYSTEM SET max_replication_slots = 4" >/dev/null
bin/cluster stop sseload >/dev/null
bin/cluster start sseload
createdb sseload
agent_database sseload acme
psql -X -q -d sseload -c "CREATE PUBLICATION pg_todos_feed FOR TABLE todo.events WITH (publish = 'insert')" \
  -c "ALTER ROLE agent_login REPLICATION" >/dev/null
token=$(psql -X -At -d sseload -c "SELECT token FROM todo.create_token('acme', 'load-writer')")
log=$(mktemp)
for feed in ${SSE_FEEDS:-log logical}; do
  SSE_FEED=$feed timeout 900 python3 -u bench/sse_load.py "$REPO/target/release/pg_todos" sseload "$token" | tee -a "$log"
done
psql -X -q -d sseload -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots" >/dev/null
# its section of bench/results.md: the tables it printed, with what was run
version=$(bin/version)
section=$(mktemp)
{
  echo "## The HTTP service: SSE clients under steady writes ($version)"
  echo
  echo "\`pg_todos serve\` (release build) and its cluster on this machine, all on loopback; the clients"
  echo "follow \`/v1/events\` while one writer POSTs to \`/v1/todos\` at a steady rate, once with the"
  echo "default feed (\`--feed log\`: the streamed tenants' cursors probed every 100 ms tick) and once"
  echo "with \`--feed logical\` (a replication slot decoded every tick). Latency is from the moment the"
  echo "writer's request returned (committed) to the moment a client read the \`todo.updated\` event"
  echo "carrying that todo, over every (client, todo) pair; it includes the Python clients' own"
  echo "overhead (their reader threads share the same cores). Idle: before the writes, every client"
  echo "connected and nothing written."
  today=$(date +%F)
  awk -v today="$today" '
    /^### SSE load: / { sub(/^### SSE load: /, ""); print ""; print "`bench/sse_load.sh`, " today ": " $0; print ""; next }
    /^\| measure \| value \|$/ { on = 1 }
    on { print }
    /^\| server RSS/ { on = 0 }
  ' "$log"
} >"$section"
python3 bench/report.py put "$section"
