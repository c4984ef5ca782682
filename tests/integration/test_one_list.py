#!/usr/bin/env python3
"""one list per connection: the list an MCP connection is bound to wins over a tool's own
project argument (Task Master's `projectRoot`, beads' `workspace_root`), as the plain role
agent_login, through the official MCP Python SDK:
  - over Streamable HTTP with `?list=dropin`, Task Master's add_task with a projectRoot and
    beads' create with a workspace_root both land in `dropin`, and get_tasks reads it there;
    the same with a token made with a default
    list and no `?list=`;
  - over stdio with `--conversation dropin-2`, the same;
  - not bound, the project argument still names the list: over HTTP with no list, a
    projectRoot's task lands in `project:<root>`; over stdio started in a directory, with no
    list named, a projectRoot other than that directory lands in its own `project:<root>`
    (hosts such as Claude Desktop start every server in one directory, and the argument is
    how they tell projects apart);
  - in SQL, `todo.list_bound` set in the transaction binds the list in context, and a value
    left by an earlier transaction does not.
"""
import asyncio
import json
import tempfile

import psycopg
import pytest

import mcp_session
import web
from checks import check

DB = "one_list"
SERVER = SRV = None


@pytest.fixture(scope="module", autouse=True)
def one_list_service(cluster, cli):
    global SERVER, SRV
    SERVER = cli
    with web.serving(cluster, cli, DB) as SRV:
        yield


def lists():
    """Each list of the tenant and the subjects on it."""
    with psycopg.connect(dbname=DB, user="postgres", autocommit=True) as c:
        rows = c.execute("SELECT coalesce(conversation_id, ''), subject FROM todo.todos "
                         "WHERE tenant_id = 'acme' ORDER BY id").fetchall()
    found = {}
    for conv, subject in rows:
        found.setdefault(conv, []).append(subject)
    return found


def on(listed, subject):
    """The list a subject is on."""
    return next((conv for conv, subjects in listed.items() if subject in subjects), None)


async def work(session, tag):
    """A Task Master task and a beads issue, each naming a project of its own. Whether get_tasks,
    naming a third project, reads the task back."""
    await session.call("add_task", {"projectRoot": f"/elsewhere/{tag}", "title": f"tm {tag}", "description": "d"})
    await session.call("create", {"workspace_root": f"/beads/{tag}", "title": f"bd {tag}"})
    got, is_error, text = await session.call("get_tasks", {"projectRoot": f"/other/{tag}"})
    return (not is_error) and f"tm {tag}" in text


def test_over_http():
    async def run():
        _, tok = web.token(DB, "acme", "bound")
        async with mcp_session.Http(f"http://{web.HOST}:{SRV.port}/mcp?list=dropin&tools=taskmaster,beads", tok) as s:
            read_back = await work(s, "http")
        listed = lists()
        check("?list=dropin: Task Master's task lands in dropin, not in its projectRoot's list",
              on(listed, "tm http") == "dropin", listed)
        check("?list=dropin: beads' issue lands in dropin, not in its workspace_root's list",
              on(listed, "bd http") == "dropin", listed)
        check("get_tasks with another projectRoot reads dropin", read_back)
        _, default_tok = web.token(DB, "acme", "defaulted", default_list="team")
        async with mcp_session.Http(f"http://{web.HOST}:{SRV.port}/mcp?tools=taskmaster,beads", default_tok) as s:
            await work(s, "token")
        check("a token's default list binds the same way", on(lists(), "tm token") == "team" and
              on(lists(), "bd token") == "team", lists())
        async with mcp_session.Http(f"http://{web.HOST}:{SRV.port}/mcp?tools=taskmaster", tok) as s:
            await s.call("add_task", {"projectRoot": "/srv/free", "title": "tm free", "description": "d"})
        check("no list bound: projectRoot names the list", on(lists(), "tm free") == "project:/srv/free", lists())
    asyncio.run(run())


def test_over_stdio():
    async def run():
        cwd = tempfile.mkdtemp(prefix="pg_todos_one_list_")
        async with mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--tools", "taskmaster,beads",
                                     "--conversation", "dropin-2", cwd=cwd) as s:
            read_back = await work(s, "stdio")
        listed = lists()
        check("--conversation dropin-2: both land in dropin-2",
              on(listed, "tm stdio") == "dropin-2" and on(listed, "bd stdio") == "dropin-2", listed)
        check("--conversation dropin-2: get_tasks with another projectRoot reads it", read_back)
        async with mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--tools", "taskmaster", cwd=cwd) as s:
            await s.call("add_task", {"projectRoot": "/srv/desktop", "title": "tm desktop", "description": "d"})
        check("the project's list by default is not bound: projectRoot names the list",
              on(lists(), "tm desktop") == "project:/srv/desktop", lists())
    asyncio.run(run())


def test_in_sql():
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c:
        def add(title, bound):
            with c.transaction():
                if bound:
                    c.execute("SELECT set_config('todo.list_bound', 'on', true)")
                c.execute("SELECT todo.set_context('acme', 'sql-list', 'agent-a')")
                c.execute("SELECT todo.call('taskmaster/add_task', %s::jsonb)",
                          (json.dumps({"projectRoot": "/srv/sql", "title": title, "description": "d"}),))
        add("tm sql bound", True)
        add("tm sql free", False)
        c.execute("SET todo.list_bound = 'on'")  # a session's value, left for later transactions
        add("tm sql stale", False)
    listed = lists()
    check("todo.list_bound on in the transaction: the list in context wins", on(listed, "tm sql bound") == "sql-list",
          listed)
    check("not set: projectRoot names the list", on(listed, "tm sql free") == "project:/srv/sql", listed)
    check("a value of an earlier transaction does not bind", on(listed, "tm sql stale") == "project:/srv/sql", listed)
