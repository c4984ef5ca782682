#!/usr/bin/env python3
"""A supervisor fans a release out to two sub-agents through pg_todos, over MCP.

Three MCP clients (the official Python SDK), each with its own pg_todos_mcp server process:
the same tenant and conversation, a different agent name each. A fourth connection follows
the tenant's change feed and prints every list it sees change.

  supervisor  lays out the work with seed 004's AddTask, makes "publish" wait for "build"
              (block_todo) and gives "ship" a subtask (add_subtask);
  sub-1/sub-2 loop: claim_todo (the next ready todo: unclaimed, unblocked, no open
              subtasks), work, finish_todo with the claim's fence, until nothing is left;
  listener    reads todo.changes_since(cursor) every 0.2 s: the lists that transactions
              committed since its cursor changed, each whole (never a rolled-back one).

Exits 1 unless every todo was finished exactly once, by a claim, "publish" after "build" and
"ship" after its subtask, and the feed showed the release's list with every todo completed. Usage:
  examples/mcp_supervisor.py --server target/debug/pg_todos_mcp --dbname DB --user ROLE --tenant T
(libpq environment for the host; the tenant must be registered). ROLE is what the agents'
MCP servers connect as: hand agents a role bound to the tenant with the functions only,
todo.grant_usage(ROLE, T, plain_sql => false) (the listener needs no more either).
"""
import argparse
import asyncio
import os
import threading
import time

import psycopg
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

ap = argparse.ArgumentParser()
ap.add_argument("--server", required=True)
ap.add_argument("--dbname", required=True)
ap.add_argument("--user", required=True)
ap.add_argument("--tenant", required=True)
ap.add_argument("--conversation", default=f"release-{os.getpid()}")
opts = ap.parse_args()


def params(agent):
    env = {k: v for k, v in os.environ.items() if k.startswith("PG") or k in ("PATH", "HOME", "USER")}
    env.update(PGDATABASE=opts.dbname, PGUSER=opts.user)
    args = ["--tenant", opts.tenant, "--conversation", opts.conversation, "--agent", agent]
    return StdioServerParameters(command=opts.server, args=args, env=env)


async def call(session, tool, args):
    r = await session.call_tool(tool, args)
    return r.structured_content, bool(r.is_error)


class Agent:
    def __init__(self, name):
        self.name = name

    async def __aenter__(self):
        self._t = stdio_client(params(self.name))
        read, write = await self._t.__aenter__()
        self._s = ClientSession(read, write, client_info=Implementation(name=self.name, version="1"))
        self.session = await self._s.__aenter__()
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._s.__aexit__(*exc)
        await self._t.__aexit__(*exc)


def changes(conn, cursor):
    """What changed since `cursor` (None: nothing yet, only the current cursor): the new
    cursor and the changed lists, [{"conversation_id", "todos": [OpenCode todo items]}]."""
    with conn.transaction():   # the context is transaction-local
        conn.execute("SELECT todo.set_context(%s)", (opts.tenant,))
        feed = conn.execute("SELECT todo.changes_since(%s::text)", (cursor,)).fetchone()[0]
    return feed["cursor"], feed["changes"]


def listen(stop, seen):
    """The tenant's change feed, as an app's UI would follow it: no LISTEN (the store sends no
    NOTIFY by default), a read of the log every 0.2 s from the previous read's cursor. Appends
    each list of the release it sees, as {id: status}, to `seen`."""
    with psycopg.connect(dbname=opts.dbname, user=opts.user, autocommit=True) as conn:
        cursor, _ = changes(conn, None)
        seen.append(None)  # ready
        while True:
            stopping = stop.wait(0.2)   # one more read after the stop: nothing is left unread
            cursor, changed = changes(conn, cursor)
            for change in changed:
                if change["conversation_id"] != opts.conversation:
                    continue
                todos = {t["id"]: t["status"] for t in change["todos"]}
                seen.append(todos)
                counts = {s: list(todos.values()).count(s) for s in sorted(set(todos.values()))}
                print(f"  feed: {opts.conversation}: {counts}")
            if stopping:
                return


async def worker(name, log):
    async with Agent(name) as a:
        idle = 0
        while idle < 20:
            claimed, err = await call(a.session, "claim_todo", {"lease_seconds": 30})
            if err or not claimed.get("claimed"):
                idle += 1
                await asyncio.sleep(0.1)   # what is left waits for a todo another agent holds
                continue
            idle = 0
            print(f"  {name}: claimed #{claimed['id']} {claimed['subject']!r} (fence {claimed['fence']})")
            await asyncio.sleep(0.3)       # the work (longer than the feed's 0.2 s: the listener sees it under way)
            done, err = await call(a.session, "finish_todo",
                                   {"id": claimed["id"], "fence": claimed["fence"], "outcome": f"done by {name}"})
            if err:
                raise SystemExit(f"{name}: finish refused: {done}")
            log.append((time.monotonic(), name, claimed["id"], claimed["subject"]))


async def main():
    stop, seen = threading.Event(), []
    listener = threading.Thread(target=listen, args=(stop, seen))
    listener.start()
    while not seen:
        if not listener.is_alive():
            raise SystemExit("the listener could not start")
        time.sleep(0.05)
    async with Agent("supervisor") as sup:
        print("supervisor: laying out the release")
        ids = {}
        for title in ["build the artifacts", "publish the artifacts", "write the changelog", "ship the release"]:
            task, err = await call(sup.session, "AddTask", {"title": title})
            ids[title] = int(task["id"])
        await call(sup.session, "block_todo", {"id": ids["publish the artifacts"], "on": ids["build the artifacts"]})
        sub, _ = await call(sup.session, "add_subtask", {"parent": ids["ship the release"], "subject": "tag the commit"})
        ids["tag the commit"] = sub["id"]
        ready, _ = await call(sup.session, "ready_todos", {})
        print("supervisor: ready now:", [t["subject"] for t in ready["todos"]])
        log = []
        await asyncio.gather(worker("sub-1", log), worker("sub-2", log))
        tasks, _ = await call(sup.session, "ListTasks", {})
    time.sleep(0.5)
    stop.set()
    listener.join()

    finished = {}
    for at, name, tid, subject in log:
        finished.setdefault(subject, []).append((at, name))
    print("supervisor: finished —", {s: [n for _, n in f] for s, f in finished.items()})
    print("supervisor: task list —", [(t["title"], t["done"]) for t in tasks["tasks"]])
    print(f"listener: the release's list changed {len(seen) - 1} times in the feed it read")
    problems = []
    if sorted(finished) != sorted(ids) or any(len(v) != 1 for v in finished.values()):
        problems.append(f"each todo finished exactly once: {finished}")
    if finished["publish the artifacts"][0][0] < finished["build the artifacts"][0][0]:
        problems.append("publish finished before build")
    if finished["ship the release"][0][0] < finished["tag the commit"][0][0]:
        problems.append("ship finished before its subtask")
    if not all(t["done"] for t in tasks["tasks"]):
        problems.append(f"open tasks left: {tasks}")
    last = seen[-1] if len(seen) > 1 else {}
    if sorted(last) != sorted(str(i) for i in ids.values()) or set(last.values()) != {"completed"}:
        problems.append(f"the feed's last list of the release is not every todo completed: {last}")
    for p in problems:
        print("FAILED:", p)
    if problems:
        raise SystemExit(1)
    print(f"ok: {len(ids)} todos, each finished exactly once by a claim, in dependency order")


asyncio.run(main())
