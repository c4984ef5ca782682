#!/usr/bin/env bash
# sse_load: `pg_todos serve` (release build) on a throwaway cluster (.cluster/sseload, on its
# Unix socket) with 100 SSE clients connected while REST writes run at a
# steady 20/s for 30 s, all on loopback. Proves no request or stream fails and every client
# sees every written todo; reports the server's RSS (first/last/max) and p50/p99 from commit
# to event receipt as a Markdown table (bench/sse_load.py), and writes it as the "HTTP service"
# section of bench/results.md.
# Quick run: SSE_SECONDS=5 SSE_CLIENTS=20 bench/sse_load.sh   (SSE_RATE sets the writes/s)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
cargo build --release -p pg_todos_cli >/tmp/pg_todos-sse-build.log 2>&1 || { cat /tmp/pg_todos-sse-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway sseload
createdb sseload
agent_database sseload acme
token=$(psql -X -At -d sseload -c "SELECT token FROM todo.create_token('acme', 'load-writer')")
log=$(mktemp)
timeout 900 python3 -u bench/sse_load.py "$REPO/target/release/pg_todos" sseload "$token" | tee "$log"
# its section of bench/results.md: the table it printed, with what was run
version=$(bin/version)
section=$(mktemp)
{
  echo "## The HTTP service: SSE clients under steady writes ($version)"
  echo
  today=$(date +%F)
  sed -n "s|^### SSE load: |\\\`bench/sse_load.sh\\\`, $today: |p" "$log"
  echo
  echo "\`pg_todos serve\` (release build) and its cluster on this machine, all on loopback; the clients"
  echo "follow \`/v1/events\` while one writer POSTs to \`/v1/todos\` at a steady rate. Latency is from"
  echo "the moment the writer's request returned (committed) to the moment a client read the"
  echo "\`todo.updated\` event carrying that todo, over every (client, todo) pair; it includes the"
  echo "Python clients' own overhead (their reader threads share the same cores)."
  echo
  sed -n '/^| measure | value |$/,/^| server RSS/p' "$log"
} >"$section"
python3 bench/report.py put "$section"
