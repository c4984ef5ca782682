#!/usr/bin/env bash
# docs: every sql block of README.md and docs/*.md runs in psql and prints exactly the text
# block after it (the contract: tests/docs.py's docstring). Assumes the extension is
# installed, like the other tests/*.sh after bin/installcheck (bin/installcheck 00_setup
# installs it); starts a throwaway cluster named docs (port 54348, or PGTODOS_DOCS_PORT: docs-PORT).
#   tests/docs.sh [page ...]            check the pages (default: README.md, docs/*.md)
#   tests/docs.sh --accept [page ...]   write each block's actual output into its text block
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
PORT=${PGTODOS_DOCS_PORT:-54348}
# one run at a time per port: a second run would destroy the first one's cluster
exec 9>"/tmp/pg_todos-docs-$PORT.lock"
flock 9
. bin/lib/throwaway.sh
name=docs; [ "$PORT" = 54348 ] || name=docs-$PORT
throwaway "$name" "$PORT"
available=$(psql -X -q -At -d postgres -c \
  "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_todos'")
if [ -z "$available" ]; then
  echo "pg_todos is not installed in this PostgreSQL: run bin/installcheck 00_setup first" >&2
  exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ "$available" = "$version" ] || echo "warning: the installed pg_todos is $available, the code is $version" >&2
PGTZ=UTC python3 tests/docs.py "$@"
