#!/usr/bin/env python3
"""tracker_read: Task Master's `get_tasks` on one list of TASKS tasks (2,000), through Task
Master's own MCP server reading its own tasks.json, and through `pg_todos mcp --tools
taskmaster` reading the same tasks imported into PostgreSQL; both over stdio, through the
official MCP Python SDK's client, as an agent runtime calls them. Each call is timed from the
request to the whole answer; CALLS calls (20) after one to warm up. Prints bench/results.md's
section "A tracker's whole-list read": median and slowest, the answer's bytes and tasks, and
the ratio (Task Master's median / ours: above 1.0, ours is faster).
Usage: bench/tracker_read.py DBNAME TENANT PG_TODOS TASK_MASTER_MCP PROJECT TASKS VERSION
(libpq environment of the cluster; PROJECT holds .taskmaster/tasks/tasks.json, imported into
TENANT's list project:<PROJECT> already: bench/tracker_read.sh does both)
"""
import asyncio
import datetime
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import mcp_session  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

DB, TENANT, PG_TODOS, TASK_MASTER, PROJECT, TASKS, VERSION = sys.argv[1:8]
TASKS = int(TASKS)
CALLS = int(os.environ.get("CALLS", 20))


class TaskMaster(mcp_session.Stdio):
    """Task Master's own MCP server (`task-master-mcp`), started in the project."""

    def __init__(self, program, cwd):
        mcp_session.Session.__init__(self, "tracker-read-bench")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "USER")}
        self.params = StdioServerParameters(command=program, args=[], env=env, cwd=cwd)


async def timed_reads(session):
    """CALLS timed get_tasks calls after one untimed: (times in ms, bytes, tasks) of the
    answers (the last answer's bytes and tasks)."""
    times, text = [], ""
    for i in range(CALLS + 1):
        t0 = time.perf_counter()
        _, is_error, text = await session.call("get_tasks", {"projectRoot": PROJECT})
        took = (time.perf_counter() - t0) * 1000
        assert not is_error, text[:500]
        if i:
            times.append(took)
    return times, len(text.encode()), len(json.loads(text)["data"]["tasks"])


async def main():
    ours = mcp_session.Stdio(PG_TODOS, DB, "--tenant", TENANT, "--tools", "taskmaster", cwd=PROJECT)
    theirs = TaskMaster(TASK_MASTER, PROJECT)
    rows = []
    for label, session in (("Task Master 0.43.1, its tasks.json", theirs), ("pg_todos mcp --tools taskmaster", ours)):
        async with session as s:
            rows.append((label, *await timed_reads(s)))
    (_, tm, _, _), (_, pg, _, _) = rows
    print("## A tracker's whole-list read: Task Master's get_tasks\n")
    print(f"`bench/tracker_read.sh` on {datetime.date.today().isoformat()}, pg_todos {VERSION}: one list of "
          f"{TASKS:,} tasks, `get_tasks` through each MCP server over stdio (the official MCP Python SDK's client), "
          f"{CALLS} calls each after one to warm up; from the request to the whole answer. pg_todos answers at "
          "most `todo.max_read_todos` tasks (1,000 by default) and says how many it left out.\n")
    print("| get_tasks, one list | median | slowest | answer | tasks in it | per task |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, times, size, tasks in rows:
        median = statistics.median(times)
        print(f"| {label} | {median:.1f} ms | {max(times):.1f} ms | {size:,} bytes | {tasks:,} | {median * 1000 / tasks:.0f} µs |")
    print(f"\nRatio (Task Master's median / ours): {statistics.median(tm) / statistics.median(pg):.2f}×; "
          "per task returned: "
          f"{(statistics.median(tm) / rows[0][3]) / (statistics.median(pg) / rows[1][3]):.2f}×.")

asyncio.run(main())
