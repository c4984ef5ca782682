#!/usr/bin/env bash
# tracker_read: Task Master's get_tasks on a list of TASKS tasks (2,000), through Task
# Master's own MCP server on its own tasks.json and through `pg_todos mcp --tools taskmaster`
# on the same tasks imported (release builds, a throwaway cluster .cluster/trackerread on its
# Unix socket): bench/tracker_read.py times CALLS calls (20) of each. Needs Task Master from
# tests/trackers (bin/setup installs it). Writes the section "A tracker's whole-list read" of
# bench/results.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
TASKS=${TASKS:-2000}
TASK_MASTER=$REPO/tests/trackers/node_modules/.bin/task-master-mcp
[ -x "$TASK_MASTER" ] || { echo "bench/tracker_read: $TASK_MASTER is missing: run bin/setup" >&2; exit 1; }
echo "==> building pg_todos in release mode" >&2
bin/install --release
cargo build --release -p pg_todos_cli >/tmp/pg_todos-tracker-read-build.log 2>&1 \
  || { cat /tmp/pg_todos-tracker-read-build.log >&2; exit 1; }
. bin/lib/throwaway.sh
throwaway trackerread
createdb trackerread
agent_database trackerread bench
project=$(mktemp -d /tmp/pg_todos-tracker-read-XXXXXX)
chmod 755 "$project"
mkdir -p "$project/.taskmaster/tasks"
# TASKS tasks as Task Master writes them: a quarter each pending, in-progress, done and
# deferred; every tenth waits on the one before
python3 - "$project/.taskmaster/tasks/tasks.json" "$TASKS" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
statuses = ["pending", "in-progress", "done", "deferred"]
tasks = [{"id": i, "title": f"Task {i}: build part {i} of the service",
          "description": f"Part {i}: write it, test it, document it",
          "details": f"Follow the design of part {i}; keep the interface of part {i - 1}.",
          "testStrategy": f"The tests of part {i} pass", "status": statuses[i % 4],
          "dependencies": [i - 1] if i % 10 == 0 else [],
          "priority": ["high", "medium", "low"][i % 3], "subtasks": []} for i in range(1, n + 1)]
meta = {"version": "1.0.0", "lastModified": "2026-11-29T00:00:00.000Z", "taskCount": n,
        "completedCount": n // 4, "tags": ["master"], "created": "2026-11-29T00:00:00.000Z",
        "description": "Tasks for master context", "updated": "2026-11-29T00:00:00.000Z"}
json.dump({"master": {"tasks": tasks, "metadata": meta}}, open(path, "w"), indent=2)
PY
echo "==> importing $TASKS tasks" >&2
PG_TODOS_TENANT=bench PGDATABASE=trackerread PGUSER=agent_login \
  target/release/pg_todos import taskmaster "$project" >&2
# the statistics autovacuum gathers within a minute of an import: without them the planner
# may read each page of a long list by a scan of all the tenant's rows
psql -X -q -d trackerread -c "ANALYZE todo.todos"
report=$(mktemp)
timeout 900 python3 -u bench/tracker_read.py trackerread bench "$REPO/target/release/pg_todos" "$TASK_MASTER" \
  "$project" "$TASKS" "$(bin/version)" | tee "$report"
rm -rf "$project"
python3 bench/report.py put "$report"
