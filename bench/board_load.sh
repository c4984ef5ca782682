#!/usr/bin/env bash
# board_load: how fast the board opens with 500 todos on the page. `pg_todos serve` (release
# build) on a throwaway cluster (.cluster/boardload, on its Unix socket), 500 todos in 10
# lists (claims, a lapsed lease, dependencies, subtasks), headless Chromium on loopback opening
# /#token=… BOARD_LOADS times (20), nothing cached (the service sends no-store). Reports, as a Markdown table
# (bench/board_load.py), the median and slowest of: navigation to the first board on the page
# (the page's "board:shown" mark: every todo rendered), a render alone, and the bytes of the
# page's files; writes it as the "The board" section of bench/results.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
cargo build --release -p pg_todos_cli >/tmp/pg_todos-board-build.log 2>&1 || { cat /tmp/pg_todos-board-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway boardload
createdb boardload
agent_database boardload acme
token=$(psql -X -At -d boardload -c "SELECT token FROM todo.create_token('acme', 'Ada', person => true)")
log=$(mktemp)
timeout 900 python3 -u bench/board_load.py "$REPO/target/release/pg_todos" boardload "$token" | tee "$log"
version=$(bin/version)
section=$(mktemp)
{
  echo "## The board: opening it with 500 todos ($version)"
  echo
  echo "\`bench/board_load.sh\`, $(date +%F): \`pg_todos serve\` (release build) and its cluster on this"
  echo "machine, headless Chromium on loopback, 500 todos in 10 lists on the page (claims, a lapsed"
  echo "lease, dependencies, subtasks); nothing cached (the service sends its files no-store). From"
  echo "navigation to the first board on the page: the page, its style sheet and modules,"
  echo "\`/v1/board\`, and the render of every todo (the page's \`board:shown\` mark)."
  echo
  sed -n '/^| measure /,/^$/p' "$log"
} >"$section"
python3 bench/report.py put "$section"
