#!/usr/bin/env bash
# openapi: builds `pg_todos serve` (cli/), then on a throwaway cluster with the extension, the
# tenants acme and globex and the plain role agent_login, tests/openapi.py checks that
# /openapi.json is cli/assets/openapi.json, a valid OpenAPI 3.1 document naming every route,
# and runs schemathesis (a property-based API fuzzer, from PyPI) against the running service
# with it: no 5xx, every status, header, content type and body as documented, requests the
# document forbids refused (4xx), requests it allows not refused as malformed. Deterministic
# (--generation-deterministic); /v1/events (an endless stream) and /mcp (JSON-RPC, tested by
# tests/mcp_http.sh) are described but not fuzzed.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_OPENAPI_PORT:-54339}
bin/install
cargo build -p pg_todos_cli >/tmp/pg_todos-openapi-build.log 2>&1 || { cat /tmp/pg_todos-openapi-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway openapi "$PORT"
createdb openapi
agent_database openapi acme globex
timeout 900 python3 -u tests/openapi.py "$REPO/target/debug/pg_todos" openapi
