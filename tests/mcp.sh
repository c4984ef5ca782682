#!/usr/bin/env bash
# mcp: builds the MCP server (cli/, a workspace member), then on a throwaway cluster with the
# extension, two tenants and the plain role agent_login:
#   - tests/mcp_client.py drives it with the official MCP Python SDK (tools/list, seed 003's
#     example session, two tenants, one dialect, each runtime's dialect alone, the text the
#     model reads from todo.call_mcp, the project's list surviving a restart and kept to its
#     directory and tenant, --session-list, claims, startup errors); each server runs in a
#     temporary directory of its own, never in the repository's;
#   - the examples: a supervisor, two sub-agents and a notification listener, with psycopg
#     and the writ (examples/supervisor.py) and over MCP, each agent its own server
#     (examples/mcp_supervisor.py); each checks the final state.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_MCP_PORT:-54324}
cargo build -p pg_todos_cli >/tmp/pg_todos-mcp-build.log 2>&1 || { cat /tmp/pg_todos-mcp-build.log >&2; exit 1; }
server="$REPO/target/debug/pg_todos_mcp"
. bin/lib/throwaway.sh
throwaway mcp "$PORT"
createdb mcp
agent_database mcp acme globex
status=0
timeout 300 python3 -u tests/mcp_client.py "$server" mcp ../shared/seeds/003_*.txt || status=1
example() {
  echo "==> $*"
  if timeout 300 python3 -u "$@"; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; status=1; fi
}
example examples/supervisor.py --dbname mcp --user agent_login --tenant acme
example examples/mcp_supervisor.py --server "$server" --dbname mcp --user agent_login --tenant acme
exit $status
