#!/usr/bin/env bash
# mcp_http: builds `pg_todos serve` (cli/), then on a throwaway cluster with the extension, the
# tenants acme and globex and the plain role agent_login, tests/mcp_http.py drives its /mcp
# route (MCP over Streamable HTTP) with the official MCP Python SDK's client: tools/list and
# the dialects chosen by URL or header, a create and a list in the URL's list, refusals as
# isError, bad and revoked tokens, two tenants, two clients of one project, a restart of the
# service mid-session, no list; the database stopped and started under an MCP HTTP session,
# a stdio session, REST and an event stream.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_MCP_HTTP_PORT:-54338}
cargo build -p pg_todos_cli >/tmp/pg_todos-mcp-http-build.log 2>&1 || { cat /tmp/pg_todos-mcp-http-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway mcp_http "$PORT"
createdb mcp_http
agent_database mcp_http acme globex
timeout 600 python3 -u tests/mcp_http.py "$REPO/target/debug/pg_todos" mcp_http mcp_http "$PORT"
