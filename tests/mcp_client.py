#!/usr/bin/env python3
"""mcp_client: drives the pg_todos MCP server (mcp/, binary pg_todos_mcp) over stdio with the
official MCP Python SDK's client (a client this project did not write), as the plain role
agent_login:
  - tools/list is todo.tools(), tool for tool (names, descriptions, schemas, dialects);
  - seed 003's example session, read from the seed itself, gives the seed's answers;
  - the context comes from the server's configuration and the MCP session: the agent
    recorded is the client's name, a "tenant" argument is refused by the schema;
  - two servers for two tenants with the same conversation name see nothing of each other;
  - --tools keeps to one dialect; a claim and a finish go through;
  - a missing database, extension or tenant is a clear message and exit status 2.
Usage: tests/mcp_client.py SERVER_BINARY DBNAME SEED_003_FILE   (libpq environment for the host)
"""
import asyncio
import json
import os
import re
import subprocess
import sys

import psycopg

from checks import check, summary
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

SERVER, DB, SEED_003 = sys.argv[1], sys.argv[2], sys.argv[3]


def server_env(**extra):
    env = {k: v for k, v in os.environ.items() if k.startswith("PG") or k in ("PATH", "HOME", "USER")}
    env.update(PGDATABASE=DB, PGUSER="agent_login")
    env.update(extra)
    return env


class Session:
    """One server process and one MCP client session."""

    def __init__(self, *args, client="mcp-test-client", **env):
        self.params = StdioServerParameters(command=SERVER, args=list(args), env=server_env(**env))
        self.client = client

    async def __aenter__(self):
        self._transport = stdio_client(self.params)
        read, write = await self._transport.__aenter__()
        self._session = ClientSession(read, write, client_info=Implementation(name=self.client, version="1.0"))
        self.session = await self._session.__aenter__()
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._transport.__aexit__(*exc)

    async def call(self, name, args):
        r = await self.session.call_tool(name, args)
        return r.structured_content if r.structured_content is not None else r.content[0].text, bool(r.is_error)


def sql(query, *args):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        return conn.execute(query, args).fetchall()


def seed_003_session():
    """The (arguments, answer) pairs of seed 003's example session, as the seed prints them."""
    text = open(SEED_003, encoding="utf-8").read()
    session = text[text.index("## Example Session"):]
    pairs = re.findall(r"→ todolist__set\((\{.*?\})\)\n← (\{.*?\})\n", session, re.S)
    return [(json.loads(a), json.loads(b)) for a, b in pairs]


async def catalog_and_seed_003():
    async with Session("--tenant", "acme", "--conversation", "conv-003") as s:
        listed = (await s.session.list_tools()).tools
        ours = [t.model_dump(by_alias=True, exclude_none=True) for t in listed]
        expected = sql("SELECT todo.tools()")[0][0]
        check("tools/list is todo.tools(), tool for tool", ours == expected,
              f"\n{json.dumps(ours)[:300]}\n{json.dumps(expected)[:300]}")
        check("every dialect is listed by default", {t["_meta"]["pg_todos/dialect"] for t in ours} == {"plan", "opencode", "todolist", "tasks", "coord"})
        steps = seed_003_session()
        check("seed 003's example session has its four steps", len(steps) == 4, len(steps))
        for n, (args, answer) in enumerate(steps, 1):
            got, err = await s.call("todolist__set", args)
            check(f"seed 003 example, step {n}: the seed's answer", got == answer and not err, f"{got} != {answer}")
        rows = sql("""SELECT subject, status, active_form FROM todo.todos
                       WHERE tenant_id = 'acme' AND conversation_id = 'conv-003' ORDER BY position""")
        want = [(t["content"], t["status"], t["activeForm"]) for t in steps[-1][0]["todos"]]
        check("the session's list is in Postgres, row for row", rows == want, rows)
        got, err = await s.call("todolist__get", {})
        check("todolist__get returns the last list", got.get("todos") == steps[-1][0]["todos"] and not err, got)
        got, err = await s.call("todolist__set", {"todos": [{"content": "", "status": "pending", "activeForm": "x"}]})
        check("a seed 003 error object is a tool error", err and got["error"]["code"] == "empty_content", got)
        got, err = await s.call("create_todo", {"items": [{"title": "plan"}], "tenant": "globex"})
        check("the context never comes from the arguments", err and got["error"]["code"] == "invalid_arguments", got)
        got, err = await s.call("create_todo", {"items": [{"title": "who made me"}]})
        rows = sql("""SELECT tenant_id, conversation_id, agent_id LIKE 'mcp-test-client@mcp-%%', turn_id LIKE 'mcp-%%'
                        FROM todo.todos WHERE subject = 'who made me'""")
        check("rows carry the server's tenant and conversation, the session's turn, the client's name and session as agent",
              rows == [("acme", "conv-003", True, True)] and not err, (rows, got))


async def two_tenants():
    async with Session("--tenant", "acme", "--conversation", "shared", client="agent-a") as a, \
               Session("--tenant", "globex", "--conversation", "shared", client="agent-b") as b:
        added, _ = await a.call("AddTask", {"title": "acme only"})
        task_id = added["id"]
        listed_b, _ = await b.call("ListTasks", {})
        check("tenant B's list of the same conversation is empty", listed_b == {"tasks": []} or listed_b == [], listed_b)
        done_b, err = await b.call("CompleteTask", {"taskId": str(task_id)})
        missing, _ = await b.call("CompleteTask", {"taskId": "99999"})
        check("tenant B completing tenant A's task: the answer for a task that never existed",
              err and done_b == missing, f"{done_b} vs {missing}")
        listed_a, _ = await a.call("ListTasks", {})
        mine = [t for t in listed_a["tasks"] if t["id"] == task_id]
        check("tenant A's task is untouched", len(mine) == 1 and mine[0]["done"] is False, listed_a)


async def one_dialect_and_claims():
    async with Session("--tenant", "acme", "--conversation", "conv-coord", "--tools", "todolist", client="only-003") as s:
        names = [t.name for t in (await s.session.list_tools()).tools]
        check("--tools todolist lists the todolist dialect's tools only", names == ["todolist__get", "todolist__set"], names)
        got, err = await s.call("AddTask", {"title": "x"})
        check("a tool outside the dialects is an unknown tool", err and got["error"]["code"] == "unknown_tool", got)
    async with Session("--tenant", "acme", "--conversation", "conv-coord", "--tools", "coord,001", client="worker-1") as s:  # 001: the plan dialect's alias
        await s.call("create_todo", {"items": [{"title": "first"}, {"title": "second"}]})
        claimed, err = await s.call("claim_todo", {})
        check("claim_todo over MCP claims for the client's agent", claimed.get("claimed") and not err, claimed)
        if not claimed.get("claimed"):
            return
        done, err = await s.call("finish_todo", {"id": claimed["id"], "fence": claimed["fence"]})
        check("finish_todo with the claim's fence", done == {"id": claimed["id"], "status": "completed"} and not err, done)
        stale, err = await s.call("finish_todo", {"id": claimed["id"], "fence": claimed["fence"]})
        check("the same fence again is a stale claim", err and stale["error"]["code"] == "stale_claim", stale)
        holder = sql("SELECT agent_id FROM todo.events WHERE tenant_id = 'acme' AND todo_id = %s AND changes ? 'fence'", claimed["id"])
        check("the claim's event names the client and its session",
              len(holder) == 1 and holder[0][0].startswith("worker-1@mcp-"), holder)


def startup_errors():
    def run(*args, **env):
        p = subprocess.run([SERVER, *args], env=server_env(**env), input="", capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr.strip()

    code, err = run("--tenant", "acme", PGDATABASE="no_such_db")
    check("no database: exit 2 and why", code == 2 and "cannot connect to the database" in err and "no_such_db" in err, (code, err))
    code, err = run("--tenant", "acme", PGDATABASE="postgres")
    check("no extension: exit 2 and what to run", code == 2 and "CREATE EXTENSION pg_todos" in err, (code, err))
    code, err = run("--tenant", "initech")
    check("an unregistered tenant: exit 2 and why", code == 2 and 'tenant "initech" is not registered' in err, (code, err))
    code, err = run()
    check("no tenant: exit 2 and the usage", code == 2 and "--tenant" in err and "usage:" in err, (code, err))
    code, err = run("--tenant", "acme", "--tools", "seed-9")
    check("an unknown dialect: exit 2", code == 2 and 'unknown dialect "seed-9"' in err, (code, err))


async def main():
    await catalog_and_seed_003()
    await two_tenants()
    await one_dialect_and_claims()
    startup_errors()
    summary()


asyncio.run(main())
