#!/usr/bin/env bash
# mcp_spawn: spawn to the first tools/list of `pg_todos mcp` (release build) over a throwaway
# cluster's Unix socket (.cluster/mcpspawn), through the MCP Python SDK's stdio client
# (bench/mcp_spawn.py), MCP_SPAWNS times (30). Extra arguments are LABEL BINARY pairs to
# measure beside this build (an earlier build, to compare). Prints a Markdown table.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
cargo build --release -p pg_todos_cli >/tmp/pg_todos-spawn-build.log 2>&1 || { cat /tmp/pg_todos-spawn-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway mcpspawn
createdb mcpspawn
agent_database mcpspawn acme
timeout 600 python3 -u bench/mcp_spawn.py mcpspawn "this build" "$REPO/target/release/pg_todos" "$@"
