#!/usr/bin/env python3
"""mcp_spawn: how long an agent waits for `pg_todos mcp` at the start of a session: from the
spawn of the process to the answer of the first tools/list, through the official MCP Python
SDK's stdio client (as an agent runtime spawns it), over the cluster's Unix socket.
MCP_SPAWNS times (30; the first is a warm-up); median and slowest, as a Markdown table row.
Usage: bench/mcp_spawn.py DBNAME LABEL BINARY [LABEL BINARY ...]   (libpq environment of the cluster)
"""
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import mcp_session  # noqa: E402

DB = sys.argv[1]
PAIRS = list(zip(sys.argv[2::2], sys.argv[3::2]))
SPAWNS = int(os.environ.get("MCP_SPAWNS", 30))


async def once(binary, cwd):
    session = mcp_session.Stdio(binary, DB, "--tenant", "acme", "--conversation", "spawn", cwd=cwd)
    t0 = time.perf_counter()
    async with session as s:
        names = await s.names()
        took = time.perf_counter() - t0
    assert names, "no tools listed"
    return took * 1000


async def main():
    cwd = tempfile.mkdtemp(prefix="pg_todos_spawn_")
    print("| `pg_todos mcp` | spawn to the first tools/list, median | slowest |")
    print("|---|---|---|")
    for label, binary in PAIRS:
        times = [await once(binary, cwd) for _ in range(SPAWNS + 1)][1:]
        print(f"| {label} | {statistics.median(times):.1f} ms | {max(times):.1f} ms |")


asyncio.run(main())
