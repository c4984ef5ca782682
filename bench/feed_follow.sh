#!/usr/bin/env bash
# feed_follow: what following the change feed costs a resource subscriber (`pg_todos mcp`'s
# resources/subscribe and subscriptions/listen poll it twice a second each): after one write to
# a list of TODOS todos (100 and 2,000), the page todo.changes_since(cursor, NULL, 1000) gives
# (each changed list whole) set against todo.changed_lists(cursor) (which lists changed, no
# todos), CALLS calls of each (200), timed inside the database (release build, a throwaway
# cluster .cluster/feedfollow on its Unix socket, as a plain role). Writes the section
# "Following the feed" of bench/results.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
echo "==> building pg_todos in release mode" >&2
bin/install --release
. bin/lib/throwaway.sh
throwaway feedfollow
createdb feedfollow
agent_database feedfollow bench
report=$(mktemp)
PGUSER=agent_login python3 bench/feed_follow.py feedfollow bench "$(bin/version)" | tee "$report"
python3 bench/report.py put "$report"
