#!/usr/bin/env bash
# docs: every sql block of README.md and docs/*.md runs in psql and prints exactly the text
# block after it (the contract: tests/docs.py's docstring). Installs the extension with
# bin/install, then starts a throwaway cluster named docs (port 54348; with
# PGTODOS_DOCS_PORT=N, cluster docs-N on port N).
#   tests/docs.sh [page ...]            check the pages (default: README.md, docs/*.md)
#   tests/docs.sh --accept [page ...]   write each block's actual output into its text block
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_DOCS_PORT:-54348}
bin/install
# one run at a time per port: a second run would destroy the first one's cluster
exec 9>"/tmp/pg_todos-docs-$PORT.lock"
flock 9
. bin/lib/throwaway.sh
name=docs; [ "$PORT" = 54348 ] || name=docs-$PORT
throwaway "$name" "$PORT"
PGTZ=UTC python3 tests/docs.py "$@"
