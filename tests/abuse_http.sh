#!/usr/bin/env bash
# abuse_http: installs the extension (bin/install) and builds `pg_todos serve` (cli/), then on a throwaway cluster with the extension,
# the tenants acme, globex and big and the plain role agent_login, tests/abuse_http.py drives
# the service the way one hostile or broken client would, over 127.0.0.1 only, and checks each
# limit holds: half-sent headers are cut after --header-timeout and a valid request is served
# while hundreds are held (also with 256 file descriptors); idle keep-alive connections and
# slow bodies are cut; 100 slow SSE readers catching up from "1:1:" keep the service's memory
# (VmHWM) under a stated bound; a subscriber that reads nothing is ended; a revoked token's
# stream ends within seconds; the stream caps answer 429/503; one tenant's requests waiting on
# a lock do not stop another tenant's GET; X-Actor: person only from a person's token;
# /readyz without the database's words; the board's security headers; 413.
#   tests/abuse_http.sh                 the checks
#   tests/abuse_http.sh --measure BIN   only the slow-readers measurement, with BIN as the
#                                       service (e.g. a 0.8.0 build), no bound asserted
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_ABUSE_HTTP_PORT:-54337}
bin/install
cargo build -p pg_todos_cli >/tmp/pg_todos-abuse-http-build.log 2>&1 || { cat /tmp/pg_todos-abuse-http-build.log >&2; exit 1; }
server=$REPO/target/debug/pg_todos
mode=()
if [ "${1:-}" = "--measure" ]; then
  server=${2:?usage: tests/abuse_http.sh --measure SERVER_BINARY}
  mode=(--measure)
fi
. bin/lib/throwaway.sh
throwaway abuse_http "$PORT"
createdb abuse_http
agent_database abuse_http acme globex big
timeout 900 python3 -u tests/abuse_http.py "$server" abuse_http "${mode[@]}"
