#!/usr/bin/env bash
# http: builds `pg_todos serve` (cli/), then on a throwaway cluster with the extension, the
# tenants acme and globex and the plain role agent_login, tests/http_client.py runs the
# service as agent_login and proves over real HTTP: /v1/todos answers exactly as todo.rest in
# SQL; every bad credential gets one identical 401 and another tenant's todo is a 404 like a
# missing one; 413 and malformed JSON write nothing; /session/:id/todo is todowrite's list;
# Server-Sent Events arrive within 1 s of a commit, never after a rollback or for another
# tenant, and a client reconnecting with Last-Event-ID gets every conversation it missed (also
# across a killed LISTEN connection); X-Actor: person is recorded; /healthz, /readyz, 503 with
# Retry-After while the database refuses connections; graceful shutdown with a request in
# flight; startup errors exit 2 with a clear message.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_HTTP_PORT:-54332}
cargo build -p pg_todos_cli >/tmp/pg_todos-http-build.log 2>&1 || { cat /tmp/pg_todos-http-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway http "$PORT"
createdb http
agent_database http acme globex
timeout 600 python3 -u tests/http_client.py "$REPO/target/debug/pg_todos" http
