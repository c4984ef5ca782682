#!/usr/bin/env bash
# end_to_end: a request at a time through each way in (HTTP through `pg_todos serve`, MCP over
# Streamable HTTP with the official MCP Python SDK's client, MCP over stdio through
# `pg_todos mcp`), median and p99 at the client, and where the time goes (client and
# transport, the pg_todos process, the database: pg_stat_statements). Release builds, a
# throwaway cluster (.cluster/e2e, on its Unix socket, synchronous_commit off), one tenant.
# Writes the "End to end" section of bench/results.md.
# Quick run: E2E_REQUESTS=50 E2E_WARMUP=5 bench/end_to_end.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
bin/setup >/dev/null
echo "==> building pg_todos and its command in release mode" >&2
bin/install --release
cargo build --release -p pg_todos_cli >/tmp/pg_todos-e2e-build.log 2>&1 || { cat /tmp/pg_todos-e2e-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway e2e
psql -X -q -d postgres <<'SQL'
ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements, pg_todos';
ALTER SYSTEM SET synchronous_commit = off;
SQL
bin/cluster stop e2e >/dev/null
bin/cluster start e2e >/dev/null
createdb e2e
agent_database e2e acme
psql -X -q -d e2e -c "CREATE EXTENSION pg_stat_statements"
token=$(psql -X -At -d e2e -c "SELECT token FROM todo.create_token('acme', 'e2e-agent')")
log=$(mktemp)
timeout 1200 python3 -u bench/end_to_end.py "$REPO/target/release/pg_todos" e2e "$token" | tee "$log"
section=$(mktemp)
{
  echo "## End to end: HTTP and MCP requests ($(bin/version))"
  echo
  echo "\`bench/end_to_end.sh\`, $(date +%F): $(sed -n 's/^### End to end: //p' "$log"). Each path's"
  echo "client is a Python process on this machine (the official MCP Python SDK for MCP, http.client"
  echo "with keep-alive for HTTP), the service and PostgreSQL run here too, on loopback and a Unix"
  echo "socket, \`synchronous_commit = off\`. Where the time of a median request goes: *client +"
  echo "transport* is the same path's median floor (\`GET /healthz\`, or an MCP ping: answered"
  echo "without the database); *database* is the execution time of every statement the service ran"
  echo "(pg_stat_statements) per request, and *statements* how many it ran; *pg_todos process and"
  echo "its round trips* is the rest (routing, the connection pool, JSON, MCP framing, and one round"
  echo "trip to PostgreSQL per statement). The database's part is the extension's calls and the"
  echo "service's own statements (the transaction, the context)."
  echo
  sed -n '/^| path |/,$p' "$log"
} >"$section"
python3 bench/report.py put "$section"
