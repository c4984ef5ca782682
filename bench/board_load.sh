#!/usr/bin/env bash
# board_load: the board at 100, 2,000 and 10,000 todos (10 lists each: claims, dependencies,
# subtasks). `pg_todos serve` (release build) on a throwaway cluster (.cluster/boardload, on
# its Unix socket), headless Chromium on loopback. For each size: navigation to the first
# board on the page (the page's "board:shown" mark), a render alone, the bytes of /v1/board as
# sent, and an agent's change on the screen (bench/board_load.py); written as the "The board"
# section of bench/results.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
cargo build --release -p pg_todos_cli >/tmp/pg_todos-board-build.log 2>&1 || { cat /tmp/pg_todos-board-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway boardload
createdb boardload
agent_database boardload acme
log=$(mktemp)
timeout 1800 python3 -u bench/board_load.py "$REPO/target/release/pg_todos" boardload | tee "$log"
version=$(bin/version)
section=$(mktemp)
{
  echo "## The board at 100, 2,000 and 10,000 todos ($version)"
  echo
  echo "\`bench/board_load.sh\`, $(date +%F): \`pg_todos serve\` (release build) and its cluster on this"
  echo "machine, headless Chromium on loopback; each tenant's todos in 10 lists (claims, dependencies,"
  echo "subtasks). The page reads 30 todos of each list first (the rest a page at a time as a person"
  echo "scrolls) and applies each change (\`/v1/board/changes\`) instead of reading the board again."
  echo "First board: from navigation to the first board on the page (the page's \`board:shown\`"
  echo "mark), the files revalidated (ETag). A change: from just before an agent's commit to the"
  echo "page showing it."
  echo
  sed -n '/^| todos in the tenant /,$p' "$log"
} >"$section"
python3 bench/report.py put "$section"
