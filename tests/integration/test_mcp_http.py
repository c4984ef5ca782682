#!/usr/bin/env python3
"""mcp_http: the MCP server over Streamable HTTP (`/mcp` of `pg_todos serve`) driven by the
official MCP Python SDK's client (`mcp.client.streamable_http.streamable_http_client`), as the
plain role agent_login behind the service, checked against the database:
  1. tools/list: every tool of todo.tools(), as over stdio; ?tools=<dialect> each dialect alone;
     X-Todo-Tools as a header; the URL wins over the header; an unknown dialect is 400 naming it;
  2. a TaskCreate and a TaskList in the list of ?list=, stored in that conversation of the
     token's tenant, recorded as the token's label (or X-Agent-Id); a refusal is isError with
     the extension's text, and writes nothing;
  3. a missing, bogus or revoked token is refused (401) before any tool runs, saying why (RFC
     6750: no error code for no token, invalid_token with its description otherwise);
  4. tenant A's token never sees tenant B's list of the same name, whatever it asks;
  5. two clients of one project (?list=project:…) share one list;
  6. the service restarted mid-session: the same client session goes on (no MCP session is
     kept by the service) and sees what it wrote before;
  7. the token's default list when the request names none (the URL wins); no list at all: a
     tool that needs one says so (isError), naming ?list=, X-Todo-List and the token's default
     list (not SQL's todo.conversation);
  8. the official MCP TypeScript SDK's client (tests/mcp_ts/client.mjs): tools/list, a create
     and a list, a refusal, another tenant, a bogus token;
  9. the database stopped and started again under an MCP HTTP session, a `pg_todos mcp`
     stdio session, REST and an open event stream: while it is down a tool call is isError
     naming the database and REST 503, each within seconds, a new MCP session initializes and
     lists the catalog the service was built with (of its ?tools=), and a request with no token
     is still 401; once it is back the first call of each succeeds,
     nothing is committed twice, and the event stream delivers the change made after it
     (pg_ctl -m fast stop, then start: the module has a cluster of its own).
"""
import asyncio
import os
import subprocess
import time

import psycopg
import pytest

import mcp_session
import pg
import web
from checks import check
from web import HOST, Sse

DB = "mcp_http"
REPO = pg.REPO
# set by the module's fixture: the pg_todos command, the module's cluster, the running service
SERVER = CLUSTER = SRV = None


@pytest.fixture(scope="module", autouse=True)
def mcp_http_service(cluster, cli):
    global SERVER, CLUSTER, SRV
    SERVER = cli
    with pg.own_cluster("mcp_http") as c:
        CLUSTER = c
        c.database(DB, tenants=["acme", "globex"])
        SRV = Server()
        yield
        SRV.stop()


def Server(port=None):
    return web.Server(SERVER, DB, port=port)


def Client(address, tok, headers=None, name="mcp-http-test"):
    return mcp_session.Http(address, tok, headers, client=name)


def request(method, path, body=None, tok=None, port=None, **kw):
    return web.request(method, path, body, tok, port=port or SRV.port, **kw)


def admin():
    return psycopg.connect(dbname=DB, user="postgres", autocommit=True)


def token(tenant, label):
    return web.token(DB, tenant, label)


def url(port, **query):
    q = "&".join(f"{k}={v}" for k, v in query.items())
    return f"http://{HOST}:{port}/mcp" + (f"?{q}" if q else "")


def rows(query, *args):
    with admin() as c:
        return c.execute(query, args).fetchall()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


def refused(tok):
    """The status and body of an initialize with this token (none when empty)."""
    status, headers, body, _ = request("POST", "/mcp", INITIALIZE, tok=tok or None,
                                       headers={"Accept": "application/json, text/event-stream"})
    return status, body, headers.get("www-authenticate")


async def over_http():
    global SRV
    srv = SRV
    _, acme = token("acme", "ci-agent")
    _, acme2 = token("acme", "laptop-agent")
    _, globex = token("globex", "globex-agent")
    rid, revoked = token("acme", "gone")
    catalog = rows("SELECT t->>'name', t->'_meta'->>'pg_todos/dialect' FROM jsonb_array_elements(todo.tools()) t")
    every = sorted({n for n, _ in catalog})  # a name two dialects share is listed once
    dialects = sorted({d for _, d in catalog})

    # 1. tools/list
    async with Client(url(srv.port), acme) as c:
        names = sorted(await c.names())
    check("tools/list: every tool name of todo.tools(), once", names == every, (len(names), len(every)))
    alone = {}
    for d in dialects:
        async with Client(url(srv.port, tools=d), acme) as c:
            alone[d] = sorted(await c.names())
    check("?tools=<dialect>: each dialect alone lists exactly its own tools",
          all(alone[d] == sorted(n for n, x in catalog if x == d) for d in dialects), alone)
    async with Client(url(srv.port), acme, {"X-Todo-Tools": "claude-tasks"}) as c:
        by_header = sorted(await c.names())
    check("X-Todo-Tools: claude-tasks lists Claude Code's task tools",
          by_header == ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"], by_header)
    async with Client(url(srv.port, tools="todolist"), acme, {"X-Todo-Tools": "claude-tasks"}) as c:
        both = sorted(await c.names())
    check("the URL wins over the header", both == ["todolist__get", "todolist__set"], both)
    status, _, body, _ = request("POST", "/mcp?tools=nope", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                 tok=acme, headers={"Accept": "application/json, text/event-stream"})
    check("an unknown dialect is 400 naming it and the dialects there are",
          status == 400 and 'unknown dialect "nope"' in body["error"] and "claude-tasks" in body["error"], (status, body))

    # 2. a create and a list, in the list of ?list=
    task_url = url(srv.port, list="release-7", tools="claude-tasks")
    async with Client(task_url, acme, {"X-Agent-Id": "builder-1"}) as c:
        created, err, text = await c.call("TaskCreate", {"subject": "cut the branch", "description": "for 7.0"})
        tid = (created or {}).get("task", {}).get("id")
        check("TaskCreate over HTTP: the text the model reads", not err and text == f"Task #{tid} created successfully: cut the branch",
              (err, text))
        listed, err, _ = await c.call("TaskList", {})
        check("TaskList lists it", not err and [t["subject"] for t in listed["tasks"]] == ["cut the branch"], listed)
        stored = rows("SELECT tenant_id, conversation_id, agent_id FROM todo.todos WHERE id = %s::bigint AND tenant_id = 'acme'", tid)
        check("stored in the token's tenant, the list of ?list=, as X-Agent-Id",
              stored == [("acme", "release-7", "builder-1")], stored)
        before = rows("SELECT count(*) FROM todo.todos")[0][0]
        _, err, text = await c.call("TaskCreate", {"subject": ""})
        check("a refusal is isError with the extension's text", err and text != "", text)
        check("and writes nothing", rows("SELECT count(*) FROM todo.todos")[0][0] == before)
    async with Client(url(srv.port, list="release-7", tools="claude-tasks"), acme) as c:
        _, err, text = await c.call("TaskCreate", {"subject": "tag it", "description": "v7"})
        check("TaskCreate without X-Agent-Id", not err, text)
    who = rows("SELECT agent_id FROM todo.todos WHERE subject = 'tag it'")
    check("without X-Agent-Id the agent is the token's label", who == [("ci-agent",)], who)

    # 3. tokens
    no_token = refused("")
    check("no token: 401, WWW-Authenticate: Bearer realm=\"pg_todos\" with no error code, the body says what to send",
          no_token[0] == 401 and no_token[2] == 'Bearer realm="pg_todos"' and no_token[1]["reason"] == "missing"
          and "Authorization: Bearer" in no_token[1]["error_description"], no_token)
    bogus = refused("pgt_" + "0" * 64)
    check("a bogus token: 401 invalid_token, unknown",
          bogus[0] == 401 and 'error="invalid_token"' in bogus[2] and bogus[1]["reason"] == "unknown", bogus)
    check("a live token: the same initialize is 200", refused(revoked)[0] == 200, refused(revoked))
    with admin() as c:
        c.execute("SELECT todo.revoke_token(%s)", (rid,))
    gone = refused(revoked)
    check("a revoked token: 401 invalid_token, its description in the challenge and the body",
          gone[0] == 401 and gone[1]["error"] == "invalid_token" and gone[1]["reason"] == "revoked"
          and f'error_description="{gone[1]["error_description"]}"' in gone[2]
          and "revoked (todo.revoke_token)" in gone[2], gone)

    # 4. tenants
    async with Client(url(srv.port, list="release-7", tools="claude-tasks"), globex) as c:
        listed, err, _ = await c.call("TaskList", {})
        check("tenant B's token, same list name: sees none of A's", not err and listed["tasks"] == [], listed)
        got, err, _ = await c.call("TaskGet", {"taskId": str(tid)})
        check("tenant B cannot get A's task by its id", err or not got.get("task"), got)

    # 5. two clients of one project
    project = url(srv.port, list="project:/srv/app", tools="todolist")
    async with Client(project, acme, name="agent-a") as a, Client(project, acme2, name="agent-b") as b:
        _, err, _ = await a.call("todolist__set", {"todos": [{"content": "write the tests", "status": "in_progress",
                                                               "activeForm": "writing the tests"}]})
        seen, err2, _ = await b.call("todolist__get", {})
        check("two clients of one project share one list",
              not err and not err2 and [t["content"] for t in seen["todos"]] == ["write the tests"], seen)

    # 6. the service restarted mid-session
    port = srv.port
    async with Client(url(port, list="restart-me", tools="todolist"), acme) as c:
        await c.call("todolist__set", {"todos": [{"content": "before the restart", "status": "pending",
                                                  "activeForm": "x"}]})
        srv.stop()
        srv = SRV = Server(port=port)
        seen, err, text = await c.call("todolist__get", {})
        check("after a restart of the service the same client session goes on and sees its list",
              not err and [t["content"] for t in seen["todos"]] == ["before the restart"], (err, text))

    # a token's default list serves a request that names none; the URL's list wins over it
    with admin() as a:
        _, listed_tok = a.execute("SELECT token_id, token FROM todo.create_token('acme', 'ci-default', "
                                  "default_list => 'project:default-list')").fetchone()
    async with Client(url(srv.port, tools="claude-tasks"), listed_tok) as c:
        _, err, text = await c.call("TaskCreate", {"subject": "on the default list", "description": "x"})
    async with Client(url(srv.port, tools="claude-tasks", list="release-7"), listed_tok) as c:
        await c.call("TaskCreate", {"subject": "on the named list", "description": "x"})
    where = rows("SELECT subject, conversation_id FROM todo.todos WHERE subject LIKE 'on the %% list' ORDER BY 1")
    check("a token's default list serves a request naming none; ?list= wins over it",
          where == [("on the default list", "project:default-list"), ("on the named list", "release-7")], where)

    # 7. no list: the tenant-wide pool, where the dialect has one; a tool that needs a list says so
    async with Client(url(srv.port, tools="claude-tasks"), acme) as c:
        _, err, text = await c.call("TaskCreate", {"subject": "in the pool", "description": "no list"})
        check("no list: a tool that needs one is isError and says how to name one over HTTP (?list=, X-Todo-List, "
              "the token's default list), not in SQL",
              err and "needs a session" in text and "?list=" in text and "X-Todo-List" in text and "default_list" in text
              and "todo.conversation" not in text, text)

    # 8. the official TypeScript SDK's client
    ts = subprocess.run(["node", os.path.join(REPO, "tests/mcp_ts/client.mjs"), f"http://{HOST}:{srv.port}", acme, globex],
                        capture_output=True, text=True, timeout=120)
    lines = [l for l in ts.stdout.splitlines() if l.startswith(("ok: TS SDK", "FAILED: TS SDK"))]
    for l in lines:
        check(l.split(": ", 1)[1].split(" {")[0].split(' "')[0], l.startswith("ok:"), l)
    check("the TypeScript SDK client ran every check and exited 0", ts.returncode == 0 and len(lines) == 6,
          (ts.returncode, ts.stderr[-800:]))



def test_mcp_over_streamable_http():
    asyncio.run(over_http())


def test_every_client_across_a_database_restart():
    _, acme = token("acme", "restart-agent")
    asyncio.run(database_restart(SRV, acme))


def cluster(command):
    CLUSTER.stop() if command == "stop" else CLUSTER.start()


def timed(f):
    """(what f returned, seconds it took)"""
    t = time.monotonic()
    return f(), time.monotonic() - t


async def atimed(coro):
    t = time.monotonic()
    r = await coro
    return r, time.monotonic() - t


def Stdio():
    """A `pg_todos mcp` stdio session of tenant acme on list `restart-stdio`."""
    return mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--conversation", "restart-stdio", "--tools", "todolist",
                             cwd="/tmp")


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def items(*names):
    return {"todos": [{"content": n, "status": "pending", "activeForm": n} for n in names]}


async def database_restart(srv, acme):
    """8. Every client of the service, and a stdio server, across a stop and start of the
    database."""
    async with Client(url(srv.port, list="restart-http", tools="todolist"), acme) as c, Stdio() as s:
        _, err, text = await c.call("todolist__set", items("before"))
        _, err2, text2 = await s.call("todolist__set", items("before"))
        check("restart: both sessions write before it", not err and not err2, (text, text2))
        events = Sse(acme, port=srv.port)
        events.wait(lambda d: d.get("type") == "server.connected", 5)
        cluster("stop")
        try:
            (_, err, text), took = await atimed(c.call_or_error("todolist__get", {}))
            check("restart: while the database is down an MCP HTTP call is a tool error naming the database within "
                  "15 s (the token cannot be looked up)", err and "database unavailable" in text and took < 15,
                  (err, text, round(took, 1)))
            async with Client(url(srv.port, tools="todolist,coord"), acme, name="starting-while-down") as fresh:
                names = await fresh.names()
            check("restart: while the database is down a new MCP HTTP session initializes and lists the built-in "
                  "catalog's tools of ?tools=", sorted(names) == sorted(
                      ["todolist__get", "todolist__set", "claim_todo", "heartbeat_todo", "release_todo", "finish_todo",
                       "block_todo", "unblock_todo", "ready_todos", "add_subtask"]), names)
            (status, _, body, _) = request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                           port=srv.port, headers=MCP_HEADERS)
            check("restart: while the database is down a request with no token is still 401", status == 401,
                  (status, body))
            (_, err, text), took = await atimed(s.call("todolist__get", {}))
            check("restart: while the database is down a stdio call is isError within 15 s, and the server lives on",
                  err and took < 15, (err, text, round(took, 1)))
            (status, headers, body, _), took = timed(lambda: request("GET", "/v1/todos", tok=acme, port=srv.port))
            check("restart: while the database is down REST is 503 with Retry-After within 15 s",
                  status == 503 and "retry-after" in headers and took < 15, (status, body, round(took, 1)))
        finally:
            cluster("start")
        mark = len(events.messages)
        _, err, text = await c.call("todolist__set", items("before", "after"))
        check("restart: the first MCP HTTP call once it is back succeeds", not err, text)
        _, err, text = await s.call("todolist__set", items("before", "after"))
        check("restart: the first stdio call once it is back succeeds", not err, text)
        status, _, _, _ = request("GET", "/v1/todos", tok=acme, port=srv.port)
        check("restart: the first REST request once it is back is 200", status == 200, status)
        stored = rows("SELECT conversation_id, count(*) FROM todo.todos WHERE conversation_id IN ('restart-http', 'restart-stdio') "
                      "AND archived_at IS NULL GROUP BY 1 ORDER BY 1")
        check("restart: nothing committed twice (two todos in each list)",
              stored == [("restart-http", 2), ("restart-stdio", 2)], stored)
        got = events.updated("restart-http", 20, mark, lambda todos: [t["content"] for t in todos] == ["before", "after"])
        check("restart: the open event stream delivers the change made after it", got is not None,
              [m[2] for m in events.messages[mark:]][-3:])
        events.close()


