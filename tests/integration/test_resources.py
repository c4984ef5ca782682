#!/usr/bin/env python3
"""resources: lists as MCP resources (docs/mcp.md, "Lists as resources"), through the official
MCP Python SDK, as the plain role agent_login:
  - over stdio, a server on the project's list: resources/list gives that list
    (`todo://list/project%3A…`), the pool (`todo://pool`) and the board's page
    (`ui://pg_todos/board`, test_mcp_app.py); resources/templates/list the
    template `todo://list/{list}`; reading the list gives it as the writ shows it (text/plain)
    and as the REST API answers it (application/json), with what a tool wrote; another list of
    the tenant is read by the template; a URI of no list is -32602 with `data.uri`;
  - a subscriber hears a plain-SQL write: subscribed to its list, a write by another session
    (psycopg, `todo.todo_writ`) brings `notifications/resources/updated` for that URI within
    1.5 s (the feed is read every 0.5 s); a write to another list brings none for it; a write
    to the pool brings one (every list shows the pool); after resources/unsubscribe, none; a
    client holds at most 100 subscriptions (the 101st is -32602 naming the limit);
  - over HTTP, bound by `?list=`: resources/list gives that list, the pool and the page; reading it
    works; reading another list is -32602 naming both; resources/subscribe is refused (no
    session is kept over HTTP);
  - over HTTP, protocol 2026-07-28's subscriptions/listen: the response streams; it is
    acknowledged for the URIs of lists (not for a file:// URI), a plain-SQL write to the
    bound list is heard on it within 1.5 s, and a write to another list (which the bound
    connection may not read) is not.
"""
import asyncio
import http.client
import json
import os
import queue
import tempfile
import threading
import time

import psycopg
import pytest
from mcp.shared.exceptions import MCPError

import mcp_session
import web
from checks import check

DB = "resources"
SERVER = SRV = None


@pytest.fixture(scope="module", autouse=True)
def resources_service(cluster, cli):
    global SERVER, SRV
    SERVER = cli
    with web.serving(cluster, cli, DB) as SRV:
        yield


def writ(list_id, message):
    """A plain-SQL write by another session: the writ, in list `list_id` (None: the pool)."""
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c, c.transaction():
        c.execute("SELECT todo.set_context('acme', %s, 'sql-writer')", (list_id,))
        return c.execute("SELECT todo.todo_writ(%s)", (message,)).fetchone()[0]


def pool_add(subject):
    with psycopg.connect(dbname=DB, user="agent_login", autocommit=True) as c, c.transaction():
        c.execute("SELECT todo.set_context('acme', NULL, 'sql-writer')")
        c.execute("SELECT todo.rest('POST', '/v1/todos', %s::jsonb)", (json.dumps({"subject": subject}),))


async def error_of(coro):
    try:
        await coro
        return None
    except MCPError as e:
        return e.error.code, e.error.message, e.error.data


class Heard:
    """The URIs of `notifications/resources/updated` the client received, with when."""

    def __init__(self):
        self.updated = []

    async def __call__(self, message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            self.updated.append((root.params.uri, time.monotonic()))

    async def wait(self, uri, since, seconds):
        """Seconds until `uri` was heard after `since`, or None within `seconds`."""
        while time.monotonic() < since + seconds:
            hit = [t for u, t in self.updated if u == uri and t >= since]
            if hit:
                return hit[0] - since
            await asyncio.sleep(0.05)
        return None


async def over_stdio():
    heard = Heard()
    cwd = os.path.realpath(tempfile.mkdtemp(prefix="pg_todos_resources_"))
    own = f"project:{cwd}"
    async with mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--tools", "claude-tasks", cwd=cwd,
                                 on_message=heard) as s:
        listed = [(r.uri, r.name) for r in (await s.session.list_resources()).resources]
        own_uri = "todo://list/" + "".join(ch if ch.isalnum() or ch in "-._~" else
                                           "".join(f"%{b:02X}" for b in ch.encode()) for ch in own)
        check("stdio: resources/list gives the project's list, the pool and the board's page",
              listed == [(own_uri, own), ("todo://pool", "pool"), ("ui://pg_todos/board", "board")], listed)
        templates = [t.uri_template for t in (await s.session.list_resource_templates()).resource_templates]
        check("stdio: the template of a list", templates == ["todo://list/{list}"], templates)
        await s.call("TaskCreate", {"subject": "Write the migration", "description": "d"})
        read = (await s.session.read_resource(own_uri)).contents
        kinds = [(c.mime_type, c.text) for c in read]
        body = json.loads(kinds[1][1]) if len(kinds) == 2 else {}
        check("stdio: a read gives the list as the writ shows it and as the REST API answers it",
              [k for k, _ in kinds] == ["text/plain", "application/json"] and kinds[0][1].startswith("[/todo list]")
              and "Write the migration" in kinds[0][1]
              and [t["subject"] for t in body.get("todos", [])] == ["Write the migration"], kinds)
        writ("elsewhere", "/todo add on another list")
        other = (await s.session.read_resource("todo://list/elsewhere")).contents
        check("stdio: another list of the tenant is read by the template", "on another list" in other[0].text,
              other[0].text)
        err = await error_of(s.session.read_resource("todo://lists/nope"))
        check("stdio: a URI of no list is -32602 with data.uri",
              err and err[0] == -32602 and err[2] == {"uri": "todo://lists/nope"} and "todo://list/{list}" in err[1],
              err)
        await s.session.subscribe_resource(own_uri)
        t = time.monotonic()
        writ(own, "/todo add heard from SQL")
        took = await heard.wait(own_uri, t, 5)
        check("stdio: a plain-SQL write to the subscribed list is heard within 1.5 s",
              took is not None and took < 1.5, took)
        t = time.monotonic()
        writ("elsewhere", "/todo add not ours")
        check("stdio: a write to another list is not heard for ours", await heard.wait(own_uri, t, 1.5) is None,
              heard.updated[-3:])
        t = time.monotonic()
        pool_add("for every list")
        took = await heard.wait(own_uri, t, 5)
        check("stdio: a write to the pool is heard (every list shows it)", took is not None and took < 1.5, took)
        await s.session.unsubscribe_resource(own_uri)
        await asyncio.sleep(0.6)
        t = time.monotonic()
        writ(own, "/todo add after unsubscribing")
        check("stdio: after resources/unsubscribe, nothing is heard", await heard.wait(own_uri, t, 1.5) is None)
        for i in range(100):
            await s.session.subscribe_resource(f"todo://list/l{i}")
        err = await error_of(s.session.subscribe_resource("todo://list/l100"))
        check("stdio: past 100 subscriptions at once, -32602 naming the limit", err and err[0] == -32602
              and "at most 100 resources" in err[1] and err[2] == {"uri": "todo://list/l100"}, err)


async def over_http():
    _, tok = web.token(DB, "acme", "resources")
    async with mcp_session.Http(f"http://{web.HOST}:{SRV.port}/mcp?list=bound&tools=claude-tasks", tok) as s:
        listed = [r.uri for r in (await s.session.list_resources()).resources]
        check("http: resources/list gives the bound list, the pool and the board's page",
              listed == ["todo://list/bound", "todo://pool", "ui://pg_todos/board"], listed)
        await s.call("TaskCreate", {"subject": "bound work", "description": "d"})
        read = (await s.session.read_resource("todo://list/bound")).contents
        check("http: the bound list is read", "bound work" in read[0].text, read[0].text)
        err = await error_of(s.session.read_resource("todo://list/elsewhere"))
        check("http: another list is -32602 naming both", err and err[0] == -32602 and '"bound"' in err[1]
              and '"elsewhere"' in err[1] and err[2] == {"uri": "todo://list/elsewhere"}, err)
        err = await error_of(s.session.subscribe_resource("todo://list/bound"))
        check("http: resources/subscribe is refused, saying why", err and "needs a session" in err[1], err)


def test_resources():
    asyncio.run(over_stdio())
    asyncio.run(over_http())


class Listen:
    """One subscriptions/listen request (protocol 2026-07-28) on /mcp, its streamed messages
    read by a thread into `messages`."""

    def __init__(self, port, tok, list_id, uris):
        self.messages = queue.Queue()
        self.conn = http.client.HTTPConnection(web.HOST, port, timeout=30)
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "listen-test", "version": "1"}}
        body = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
                "params": {"notifications": {"resourceSubscriptions": uris}, "_meta": meta}}
        self.conn.request("POST", f"/mcp?list={list_id}", json.dumps(body),
                          {"Authorization": f"Bearer {tok}", "Content-Type": "application/json",
                           "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                           "Mcp-Method": "subscriptions/listen"})
        self.response = self.conn.getresponse()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.response:
                line = line.decode().strip()
                if line.startswith("data:") and line[5:].strip():
                    self.messages.put((json.loads(line[5:]), time.monotonic()))
        except (OSError, ValueError, AttributeError):
            pass  # the connection closed (close() after the test, or the server went)

    def next(self, method, seconds, since=0.0, uri=None):
        """The first message of `method` (for `uri`) that arrives after `since` within `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg, at = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if msg.get("method") == method and at >= since and (uri is None or msg["params"].get("uri") == uri):
                return msg, at - since
        return None

    def close(self):
        self.conn.close()


def test_subscriptions_listen_over_http():
    _, tok = web.token(DB, "acme", "listener")
    own = "todo://list/listened"
    listen = Listen(SRV.port, tok, "listened", [own, "todo://list/not-ours", "file:///etc/passwd"])
    try:
        check("http: subscriptions/listen answers a stream", listen.response.status == 200
              and listen.response.getheader("Content-Type", "").startswith("text/event-stream"),
              (listen.response.status, listen.response.getheaders()))
        ack = listen.next("notifications/subscriptions/acknowledged", 10)
        accepted = ack[0]["params"].get("notifications", {}).get("resourceSubscriptions") if ack else None
        check("http: the listen is acknowledged for the lists' URIs, not for a file:// URI",
              accepted == [own, "todo://list/not-ours"], ack)
        t = time.monotonic()
        writ("listened", "/todo add heard on the listen")
        heard = listen.next("notifications/resources/updated", 5, t, own)
        check("http: a plain-SQL write to the bound list is heard on the listen within 1.5 s",
              heard is not None and heard[1] < 1.5, heard)
        t = time.monotonic()
        writ("not-ours", "/todo add on a list this connection may not read")
        check("http: a write to a list the bound connection may not read is not heard",
              listen.next("notifications/resources/updated", 1.5, t, "todo://list/not-ours") is None)
    finally:
        listen.close()


def test_a_listen_does_not_hold_up_a_shutdown():
    _, tok = web.token(DB, "acme", "listener-at-shutdown")
    srv = web.Server(SERVER, DB)
    listen = Listen(srv.port, tok, "listened", ["todo://list/listened"])
    try:
        check("http: the listen is acknowledged", listen.next("notifications/subscriptions/acknowledged", 10) is not None)
        t = time.monotonic()
        code = srv.stop()
        took = time.monotonic() - t
        final = None
        deadline = time.monotonic() + 2
        while final is None and time.monotonic() < deadline:
            try:
                msg, _ = listen.messages.get(timeout=0.2)
                final = msg if msg.get("id") == 7 else None
            except queue.Empty:
                pass
        check("http: a service stopped with a listen open ends it and exits within 3 s, status 0",
              code == 0 and took < 3, (code, took, srv.logtext()[-800:]))
        check("http: the listen ends with its final result", final is not None and "result" in final, final)
    finally:
        listen.close()
