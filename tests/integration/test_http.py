#!/usr/bin/env python3
"""http: drives `pg_todos serve` (the HTTP service) over real HTTP, as the plain role
agent_login, and checks what it answers against the database itself (psycopg, as
agent_login or the superuser):
  1. /v1/todos answers exactly what todo.rest answers in SQL for the same requests (status
     and body, timestamps normalized), through the lifecycle, a forbidden transition (409),
     a batch PATCH, client errors (400, 404, 405);
  2. no header, Basic, a bogus and a revoked token all get the same 401; another tenant's
     todo is a 404 exactly like a missing id, and stays unchanged;
  3. a body over --max-body is 413, malformed JSON 400, and neither writes anything;
  4. GET /session/:id/todo is the list todo.call('todowrite', …) wrote, [] for an unknown one;
  5. SSE: an event within 1 s of a commit, none after a rollback or for another tenant, one
     for a plain SQL INSERT, one batch with the cursor on its last message only, a client
     that reconnects with Last-Event-ID gets the three conversations it missed; the LISTEN
     connection killed while a change commits: the change still arrives;
  6. X-Actor: person from a token made for a person records person:<label>; from an agent's
     token it is 403; X-Agent-Id the agent, X-Agent-Id person:… (any case) is 400;
  7. /healthz, /readyz (503 and REST 503 with Retry-After while the database refuses
     connections, never with the database's words); SIGTERM with an SSE client and a PATCH waiting on a row lock: no new
     connections, the PATCH completes 200, the stream ends, exit 0; past --shutdown-grace the
     process exits 1 and the cut request commits nothing; with Accept-Encoding: gzip the
     JSON answers and the board's files come gzipped, to the byte the identity body (not
     under 1 kB, not with gzip;q=0, never the event stream), with Vary; the board's files
     carry an ETag and answer 304 with no body to an If-None-Match that names it;
  8. an unreachable database, a database without the extension, a bad flag: exit 2 and a
     clear message; the request log never holds a token.
The module's tests share one service (the fixture `main_server`) and run in file order; the
last checks what the whole run left: the idle stream's keep-alive, exit 0 at SIGTERM, the log.
"""
import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import psycopg
from psycopg.types.json import Jsonb

import pytest

import web
from checks import check
from web import HOST, LOGS, free_port

DB = "http"
SERVER = MAIN = ACME = GLOBEX = None  # set by the module's fixture


def Server(*flags, port=None, **env):
    return web.Server(SERVER, DB, *flags, port=port, **env)


def server_env(**extra):
    return web.libpq_env(DB, **extra)


def request(method, path, body=None, tok=None, headers=None, port=None, raw=None, timeout=30):
    return web.request(method, path, body, tok, headers=headers, port=port or MAIN.port, raw=raw, timeout=timeout)


def Sse(tok, last_event_id=None, port=None):
    return web.Sse(tok, last_event_id, port or MAIN.port)


def admin(dbname=DB):
    """A superuser connection (autocommit)."""
    return psycopg.connect(dbname=dbname, user=os.environ.get("PGUSER", "postgres"), autocommit=True)


def agent():
    """A connection as the plain role agent_login, transactions explicit."""
    return psycopg.connect(dbname=DB, user="agent_login")


def token(tenant, label, person=False, default_list=None):
    return web.token(DB, tenant, label, person, default_list)


IDLE = {}  # the stream kept open through the tests (it must see the 15 s keep-alive)


@pytest.fixture(scope="module", autouse=True)
def main_server(cluster, cli):
    global SERVER, MAIN, ACME, GLOBEX
    SERVER = cli
    cluster.database(DB, tenants=["acme", "globex"])
    _, ACME = token("acme", "ci-bot")
    _, GLOBEX = token("globex", "globex-bot")
    MAIN = Server()
    IDLE.update(stream=Sse(ACME), opened=time.monotonic())
    yield
    IDLE["stream"].close()
    MAIN.stop()


@pytest.fixture
def acme():
    return ACME


@pytest.fixture
def globex():
    return GLOBEX


def sql_write(tenant, statements, conversation=None, commit=True):
    """Runs statements (SQL, params) as agent_login in one transaction with the context."""
    with agent() as c:
        c.execute("SELECT todo.set_context(%s, %s, 'sql-writer')", (tenant, conversation))
        for s, p in statements:
            c.execute(s, p)
        if commit:
            c.commit()
        else:
            c.rollback()


# ---------------------------------------------------------------------------------------------

def normalize(v):
    """Timestamps (epoch seconds, 0 meaning none) become "T"; the rest as is."""
    if isinstance(v, dict):
        return {k: ("T" if k in ("created_at", "updated_at", "completed_at") and isinstance(x, int) and x > 0
                    else normalize(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [normalize(x) for x in v]
    return v


def test_routes_equal_rest(acme):
    """1. The same requests over HTTP (tenant acme) and through todo.rest in SQL (tenant mirror)."""
    with admin() as c:
        c.execute("INSERT INTO todo.tenants VALUES ('mirror') ON CONFLICT DO NOTHING")
    seq = [
        ("POST", "/v1/todos", {"subject": "write tests", "conversation_id": "conv-a"}),
        ("POST", "/v1/todos", {"subject": "ship", "description": "to prod", "conversation_id": "conv-a"}),
        ("POST", "/v1/todos", {"subject": "pool item"}),
        ("GET", "/v1/todos", None),
        ("GET", "/v1/todos?conversation_id=conv-a&status=pending&limit=1", None),
        ("GET", "/v1/todos?conversation_id=tenant", None),
        ("GET", "/v1/todos/1", None),
        ("PATCH", "/v1/todos/1", {"subject": "write more tests", "description": "unit and e2e"}),
        ("PATCH", "/v1/todos/1", {"status": "in_progress"}),
        ("PATCH", "/v1/todos/1", {"status": "completed"}),
        ("PATCH", "/v1/todos/1", {"status": "in_progress"}),
        ("PATCH", "/v1/todos/2", {"status": "cancelled"}),
        ("PATCH", "/v1/todos/2", {"status": "pending"}),
        ("DELETE", "/v1/todos/3", None),
        ("GET", "/v1/todos/3", None),
        ("PATCH", "/v1/todos", [{"id": 1, "status": "pending"}, {"id": "2", "subject": "ship it"},
                                {"id": 999, "status": "completed"}, {"id": "abc"}]),
        ("POST", "/v1/todos", {"subject": "x", "bogus": 1}),
        ("POST", "/v1/todos", {"description": "no subject"}),
        ("GET", "/v1/todos/abc", None),
        ("GET", "/v1/todos/999999", None),
        ("PUT", "/v1/todos/1", None),
        ("DELETE", "/v1/todos", None),
        ("GET", "/v1/todos?status=weird", None),
        ("GET", "/v1/todos?limit=0", None),
        ("GET", "/v1/todos/1/x", None),
        ("GET", "/v1/todos?conversation_id=conv-a", None),
    ]
    over_http = []
    for method, path, body in seq:
        status, _, parsed, _ = request(method, path, body, tok=acme)
        over_http.append((status, normalize(parsed)))
    in_sql = []
    with agent() as c:
        for method, path, body in seq:
            c.execute("SELECT todo.set_context('mirror', NULL, 'ci-bot')")
            answer = c.execute("SELECT todo.rest(%s, %s, %s)", (method, path, Jsonb(body) if body is not None else None)).fetchone()[0]
            c.commit()
            in_sql.append((answer["status"], normalize(answer["body"])))
    for i, ((method, path, _), h, s) in enumerate(zip(seq, over_http, in_sql)):
        check(f"routes: {method} {path} (#{i}) answers as todo.rest", h == s, f"http {h} sql {s}")
    statuses = [s for s, _ in over_http]
    check("routes: the sequence covers 201, 200, 400, 404, 405 and a forbidden transition 409",
          {201, 200, 400, 404, 405, 409} <= set(statuses), statuses)
    check("routes: the forbidden transition is 409", over_http[10][0] == 409, over_http[10])


def test_tokens(acme, globex):
    """2. A bad credential gets 401 saying why (RFC 6750); another tenant's id is a 404."""
    revoked_id, revoked = token("acme", "soon-revoked")
    ok = request("GET", "/v1/todos", tok=revoked)[0]
    check("tokens: a fresh token works", ok == 200, ok)
    with admin() as c:
        c.execute("SELECT todo.revoke_token(%s)", (revoked_id,))
        expired = c.execute("SELECT token FROM todo.create_token('acme', 'short-lived', expires_in => '1 millisecond')").fetchone()[0]
        lasting = c.execute("SELECT token FROM todo.create_token('acme', 'lasting', expires_in => '1 hour')").fetchone()[0]
    check("tokens: a token with an expiry ahead works", request("GET", "/v1/todos", tok=lasting)[0] == 200)
    missing = ('Bearer realm="pg_todos"', "missing", "Authorization: Bearer")
    unknown = ("invalid_token", "unknown", "unknown to this service")
    cases = {
        "no header": (request("GET", "/v1/todos"), missing),
        "Basic": (request("GET", "/v1/todos", headers={"Authorization": "Basic YWNtZTpzZWNyZXQ="}), missing),
        "Bearer and no token": (request("GET", "/v1/todos", headers={"Authorization": "Bearer "}),
                                ("invalid_token", "malformed", "longer than 512 bytes")),
        "a token over 512 bytes": (request("GET", "/v1/todos", tok="pgt_" + "0" * 600),
                                   ("invalid_token", "malformed", "longer than 512 bytes")),
        "bogus pgt_": (request("GET", "/v1/todos", tok="pgt_" + "0" * 64), unknown),
        "garbage": (request("GET", "/v1/todos", tok="not-a-token"), unknown),
        "revoked": (request("GET", "/v1/todos", tok=revoked), ("invalid_token", "revoked", "was revoked (todo.revoke_token)")),
        "revoked, on PATCH": (request("PATCH", "/v1/todos/1", {"status": "completed"}, tok=revoked),
                              ("invalid_token", "revoked", "was revoked")),
        "expired": (request("GET", "/v1/todos", tok=expired), ("invalid_token", "expired", "has expired")),
        "events": (request("GET", "/v1/events", tok=revoked), ("invalid_token", "revoked", "was revoked")),
        "board": (request("GET", "/v1/board"), missing),
        "session list": (request("GET", "/session/x/todo", tok="pgt_" + "f" * 64), unknown),
    }
    for name, ((status, headers, body, _), (first, reason, words)) in cases.items():
        challenge = headers.get("www-authenticate", "")
        if reason == "missing":
            said = challenge == first and body == {"error": "unauthorized", "reason": "missing",
                                                   "error_description": body.get("error_description")} \
                and words in body["error_description"]
        else:
            said = challenge == f'Bearer realm="pg_todos", error="invalid_token", error_description="{body.get("error_description")}"' \
                and body.get("error") == "invalid_token" and body.get("reason") == reason and words in body["error_description"]
        check(f"tokens: {name} → 401 saying why ({reason}) in WWW-Authenticate and the body", status == 401 and said,
              (status, challenge, body))
    status, _, body, _ = request("POST", "/register", {"client_name": "x"}, tok=revoked)
    check("tokens: POST /register (an OAuth client's last step) is 404 saying there is no OAuth and why the token is refused",
          status == 404 and "has no OAuth" in body["error"] and "was revoked" in body["error"], (status, body))
    status, _, body, _ = request("POST", "/register", {"client_name": "x"}, tok=acme)
    check("tokens: POST /register with a live token says it authenticates", status == 404 and "authenticates" in body["error"],
          (status, body))
    # globex's todo, seen by acme: ids are numbered per tenant, so globex writes until its id
    # is one acme has never used
    with admin() as c:
        acme_max = c.execute("SELECT coalesce(max(id), 0) FROM todo.todos WHERE tenant_id = 'acme'").fetchone()[0]
    gid = 0
    while gid <= acme_max:
        status, _, created, _ = request("POST", "/v1/todos", {"subject": "globex secret", "conversation_id": "g-1"}, tok=globex)
        gid = created["todo"]["id"]
    with admin() as c:
        taken = c.execute("SELECT count(*) FROM todo.todos WHERE tenant_id = 'acme' AND id = %s", (gid,)).fetchone()[0]
    check("tokens: globex's todo has an id acme does not use", taken == 0, gid)
    before = request("GET", f"/v1/todos/{gid}", tok=globex)[2]
    missing = 10_000_000 + gid
    for method, body in (("GET", None), ("PATCH", {"status": "completed", "subject": "pwned"}), ("DELETE", None)):
        cross = request(method, f"/v1/todos/{gid}", body, tok=acme)
        none = request(method, f"/v1/todos/{missing}", body, tok=acme)
        check(f"tokens: acme {method} of globex's todo is the 404 of a missing id",
              cross[0] == 404 and (cross[0], cross[3]) == (none[0], none[3]), (cross, none))
    after = request("GET", f"/v1/todos/{gid}", tok=globex)[2]
    check("tokens: globex's todo is unchanged", before == after and after["todo"]["subject"] == "globex secret", after)
    listed = request("GET", "/v1/todos", tok=acme)[2]
    check("tokens: acme's list holds nothing of globex", all(t["subject"] != "globex secret" for t in listed["todos"]), listed)


def test_default_list(acme):
    """A token's default list is where its REST POSTs naming no list land, as its MCP calls do;
    `"conversation_id": null` still puts a todo in the tenant-wide pool."""
    _, listed = token("acme", "payments-bot", default_list="project:payments-api")
    status, _, made, _ = request("POST", "/v1/todos", {"subject": "rotate the key"}, tok=listed)
    check("default list: a POST naming no list lands in the token's default list",
          status == 201 and made["todo"]["conversation_id"] == "project:payments-api", (status, made))
    status, _, pooled, _ = request("POST", "/v1/todos", {"subject": "for anyone", "conversation_id": None}, tok=listed)
    check("default list: conversation_id null is the tenant-wide pool",
          status == 201 and pooled["todo"]["conversation_id"] is None, (status, pooled))
    status, _, plain, _ = request("POST", "/v1/todos", {"subject": "no list"}, tok=acme)
    check("default list: a token without one adds to the tenant-wide pool",
          status == 201 and plain["todo"]["conversation_id"] is None, (status, plain))


def counts():
    with admin() as c:
        return c.execute("SELECT (SELECT count(*) FROM todo.todos), (SELECT count(*) FROM todo.events)").fetchone()


def raw_request(port, head, chunks):
    """Sends a hand-written request (for a chunked body); returns (status, body)."""
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(head)
        for c in chunks:
            try:
                s.sendall(c)
            except OSError:
                break
        data = b""
        while True:
            try:
                part = s.recv(65536)
            except OSError:
                break
            if not part:
                break
            data += part
            if b"\r\n\r\n" in data:
                head_part, _, rest = data.partition(b"\r\n\r\n")
                length = [int(l.split(b":")[1]) for l in head_part.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if length and len(rest) >= length[0]:
                    break
    status = int(data.split(b" ")[1])
    return status, data.partition(b"\r\n\r\n")[2]


def test_limits(acme):
    """3. 413 over --max-body (declared or chunked), 400 for malformed JSON; nothing written."""
    small = Server("--max-body", "64")
    try:
        before = counts()
        big = {"subject": "x" * 100, "conversation_id": "limits"}
        status, _, parsed, raw = request("POST", "/v1/todos", big, tok=acme, port=small.port)
        check("limits: a body over --max-body is 413 with the limit named",
              status == 413 and raw == b'{"error":"request body is larger than 64 bytes"}', (status, raw))
        body = json.dumps(big).encode()
        head = (f"POST /v1/todos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {acme}\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
        chunks = [b"%x\r\n%s\r\n" % (len(body[i:i + 20]), body[i:i + 20]) for i in range(0, len(body), 20)] + [b"0\r\n\r\n"]
        status, raw = raw_request(small.port, head, chunks)
        check("limits: a chunked body over --max-body is 413 too", status == 413 and b"larger than 64 bytes" in raw, (status, raw))
        status, _, parsed, _ = request("POST", "/v1/todos", raw=b'{"subject": "half', tok=acme, port=small.port)
        check("limits: malformed JSON is 400 with serde's message",
              status == 400 and parsed["error"].startswith("malformed JSON: ") and "EOF" in parsed["error"], (status, parsed))
        status, _, parsed, _ = request("PATCH", "/v1/todos/1", raw=b"{'status': 'completed'}", tok=acme, port=small.port)
        check("limits: malformed JSON on PATCH is 400", status == 400 and parsed["error"].startswith("malformed JSON: "), parsed)
        check("limits: nothing was written (todos and events counted)", counts() == before, (before, counts()))
        fits = json.dumps({"subject": "fits", "conversation_id": "l"}).encode()
        fits = fits[:-1] + b" " * (64 - len(fits)) + b"}"
        status = request("POST", "/v1/todos", raw=fits, tok=acme, port=small.port)[0]
        check("limits: a body of exactly --max-body bytes is read", len(fits) == 64 and status == 201, (len(fits), status))
        # an empty body is NULL: todo.rest's own answer
        status, _, parsed, _ = request("POST", "/v1/todos", tok=acme, port=small.port)
        check("limits: an empty body reaches todo.rest as NULL", (status, parsed) == (400, {"error": "body must be a JSON object"}), parsed)
    finally:
        small.stop()


def test_session_list(acme):
    """4. GET /session/:id/todo is what todowrite wrote."""
    todos = [{"content": "read the issue", "status": "completed", "priority": "high", "id": "a"},
             {"content": "write the fix", "status": "in_progress", "priority": "medium", "id": "b"},
             {"content": "open the PR", "status": "pending", "priority": "low", "id": "c"}]
    with agent() as c:
        c.execute("SELECT todo.set_context('acme', 'ses_opencode_1', 'opencode')")
        out = c.execute("SELECT todo.call('todowrite', %s)", (Jsonb({"todos": todos}),)).fetchone()[0]
        c.commit()
    written = out["metadata"]["todos"]
    status, _, got, _ = request("GET", "/session/ses_opencode_1/todo", tok=acme)
    check("session: GET /session/:id/todo is todowrite's list", status == 200 and got == written, (got, written))
    check("session: in the order written, with content, status and priority",
          [(t["content"], t["status"], t["priority"]) for t in got] == [(t["content"], t["status"], t["priority"]) for t in todos], got)
    status, _, got, _ = request("GET", "/session/no-such-session/todo", tok=acme)
    check("session: an unknown session is []", (status, got) == (200, []), (status, got))
    status, _, got, _ = request("GET", "/session/ses_opencode_1/todo", tok=GLOBEX)
    check("session: another tenant's session of that name is []", (status, got) == (200, []), (status, got))


def test_events(acme, globex):
    """5. Server-Sent Events."""
    a = Sse(acme)
    g = Sse(globex)
    check("events: text/event-stream", a.status == 200 and a.content_type.startswith("text/event-stream"), (a.status, a.content_type))
    first = a.wait(lambda d: True, 5)
    check("events: the first message is server.connected with the cursor as id",
          first is not None and first[2] == {"type": "server.connected", "properties": {}} and first[1], first)
    check("events: globex's stream opens too", g.wait(lambda d: d.get("type") == "server.connected", 5) is not None)

    # a commit over HTTP
    n = len(a.messages)
    status, _, created, _ = request("POST", "/v1/todos", {"subject": "watch me", "conversation_id": "sse-1"}, tok=acme)
    committed = time.monotonic()
    m = a.updated("sse-1", 5, n)
    latency = (m[0] - committed) if m else None
    check("events: a commit arrives within 1 s", m is not None and latency < 1.0, latency)
    check("events: as OpenCode's todo.updated with the session's list",
          m is not None and m[2]["properties"]["todos"] == request("GET", "/session/sse-1/todo", tok=acme)[2], m)
    check("events: a one-change batch carries the cursor", m is not None and m[1] is not None and m[1] != first[1], m)

    # a commit in SQL, timed from the commit's return
    n = len(a.messages)
    with agent() as c:
        c.execute("SELECT todo.set_context('acme', 'sse-2', 'psql')")
        c.execute("INSERT INTO todo.todos (subject) VALUES ('plain insert')")
        c.commit()
        committed = time.monotonic()
    m = a.updated("sse-2", 5, n, lambda todos: any(t["content"] == "plain insert" for t in todos))
    latency = (m[0] - committed) if m else None
    check("events: a plain SQL INSERT into todo.todos arrives, within 1 s", m is not None and latency < 1.0, latency)

    # a rollback and another tenant's change: nothing
    n = len(a.messages)
    sql_write("acme", [("INSERT INTO todo.todos (subject) VALUES ('rolled back')", None)], "sse-rollback", commit=False)
    request("POST", "/v1/todos", {"subject": "globex only", "conversation_id": "sse-g"}, tok=globex)
    got_g = g.updated("sse-g", 5)
    time.sleep(1.5)
    with a.lock:
        extra = [m[2] for m in a.messages[n:]]
    check("events: nothing after a rollback, nothing of another tenant (1.5 s)", extra == [], extra)
    check("events: the other tenant's stream has its change", got_g is not None, got_g)

    # two conversations in one transaction: one batch, the cursor on its last message only
    n = len(a.messages)
    with agent() as c:
        c.execute("SELECT todo.set_context('acme', 'sse-3', 'psql')")
        c.execute("INSERT INTO todo.todos (subject) VALUES ('three')")
        c.execute("SELECT todo.set_context('acme', 'sse-4', 'psql')")
        c.execute("INSERT INTO todo.todos (subject) VALUES ('four')")
        c.commit()
    m3, m4 = a.updated("sse-3", 5, n), a.updated("sse-4", 5, n)
    with a.lock:
        batch = [m for m in a.messages[n:] if m[2]["properties"]["sessionID"] in ("sse-3", "sse-4")]
    check("events: one transaction over two conversations: two messages, only the last with an id",
          m3 and m4 and len(batch) == 2 and batch[0][1] is None and batch[1][1] is not None, [(x[1], x[2]) for x in batch])

    # disconnect, miss three conversations, reconnect with Last-Event-ID
    last = a.last_id()
    a.close()
    time.sleep(0.3)
    missed = {}
    for i, conv in enumerate(("gap-1", "gap-2", "gap-3")):
        request("POST", "/v1/todos", {"subject": f"missed {i}", "conversation_id": conv}, tok=acme)
        missed[conv] = request("GET", f"/session/{conv}/todo", tok=acme)[2]
    request("PATCH", f"/v1/todos/{created['todo']['id']}", {"status": "in_progress"}, tok=acme)
    missed["sse-1"] = request("GET", "/session/sse-1/todo", tok=acme)[2]
    b = Sse(acme, last_event_id=last)
    b.wait(lambda d: False, 2)  # the catch-up comes at once; read it all
    with b.lock:
        got = {m[2]["properties"]["sessionID"]: m[2]["properties"]["todos"] for m in b.messages if m[2]["type"] == "todo.updated"}
        ids = [m[1] for m in b.messages]
        types = [m[2]["type"] for m in b.messages]
    check("events: after Last-Event-ID, server.connected first (no id), then the catch-up",
          types[:1] == ["server.connected"] and ids[0] is None, (types, ids))
    check("events: the reconnected client gets the current list of each conversation it missed",
          all(got.get(conv) == todos for conv, todos in missed.items()), (got, missed))
    check("events: only the catch-up's last message carries the new cursor",
          ids[-1] is not None and all(i is None for i in ids[:-1]), ids)
    b.close()
    c = Sse(acme, last_event_id=ids[-1])
    c.wait(lambda d: False, 1)
    with c.lock:
        got = [(m[1], m[2]["type"]) for m in c.messages]
    check("events: reconnecting with the newest cursor: server.connected alone, carrying the cursor",
          len(got) == 1 and got[0][1] == "server.connected" and got[0][0] is not None, got)
    c.close()
    # the last is a snapshot by its syntax that the database refuses (xmin after xmax, 22P02)
    for bad in ("not-a-cursor", "1:2:3:4", "12:10:11,x", "9:3:"):
        s = Sse(acme, last_event_id=bad)
        check(f"events: Last-Event-ID {bad!r} is 400",
              s.status == 400 and json.loads(s.body) == {"error": "malformed Last-Event-ID"}, (s.status, getattr(s, "body", None)))
    g.close()


def test_actor(acme):
    """6. Who is recorded."""
    _, _, created, _ = request("POST", "/v1/todos", {"subject": "person edits", "conversation_id": "actor"}, tok=acme)
    tid = created["todo"]["id"]
    _, ada = token("acme", "ada", person=True)

    def last_agent():
        with admin() as c:
            return c.execute("SELECT agent_id FROM todo.events WHERE tenant_id = 'acme' AND todo_id = %s ORDER BY version DESC LIMIT 1",
                             (tid,)).fetchone()[0]
    check("actor: by default the token's label", last_agent() == "ci-bot", last_agent())
    before = counts()
    status, _, body, _ = request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"}, tok=acme, headers={"X-Actor": "person"})
    check("actor: X-Actor: person from an agent's token is 403 and writes nothing",
          status == 403 and "person => true" in body["error"] and counts() == before, (status, body))
    status = request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"}, tok=ada, headers={"X-Actor": "person"})[0]
    check("actor: X-Actor: person from a person's token records person:<label>", status == 200 and last_agent() == "person:ada",
          (status, last_agent()))
    status = request("PATCH", f"/v1/todos/{tid}", {"subject": "agent edits"}, tok=acme, headers={"X-Agent-Id": "planner-7"})[0]
    check("actor: X-Agent-Id is recorded", status == 200 and last_agent() == "planner-7", (status, last_agent()))
    before = counts()
    for agent_id in ("person:mallory", "Person:mallory", "PERSON:mallory"):
        status, _, body, _ = request("PATCH", f"/v1/todos/{tid}", {"status": "completed"}, tok=acme, headers={"X-Agent-Id": agent_id})
        check(f"actor: X-Agent-Id {agent_id} is 400 and writes nothing",
              (status, body) == (400, {"error": "X-Agent-Id may not start with person:"}) and counts() == before, (status, body))


def test_board_routes(acme, globex):
    """7. The board's changes: a person's token only, from the service's own origin; its detail read."""
    _, ada = token("acme", "Ada", person=True)
    host = f"{HOST}:{MAIN.port}"
    status, _, body, _ = request("GET", "/v1/board", tok=ada)
    check("board: /v1/board says who the token is for", status == 200 and body["viewer"] == {"label": "Ada", "person": True},
          (status, body.get("viewer")))
    status, _, body, _ = request("GET", "/v1/board", tok=acme)
    check("board: an agent's token reads a board marked not a person's",
          status == 200 and body["viewer"] == {"label": "ci-bot", "person": False}, (status, body.get("viewer")))

    before = counts()
    status, _, body, _ = request("POST", "/v1/board/act", {"op": "add", "list": "board-http", "subject": "from the board"},
                                 tok=acme)
    check("board: an agent's token may not change anything on the board (403, nothing written)",
          status == 403 and "person" in body["error"] and counts() == before, (status, body))
    status, _, body, _ = request("POST", "/v1/board/act", {"op": "add", "list": "board-http", "subject": "from the board"},
                                 tok=ada, headers={"Origin": "http://evil.example"})
    check("board: a change sent from another site's page is refused (403, nothing written)",
          status == 403 and "another site" in body["error"] and counts() == before, (status, body))
    status, _, body, _ = request("POST", "/v1/board/act", {"op": "add", "list": "board-http", "subject": "from the board"},
                                 tok=ada, headers={"Origin": f"http://{host}"})
    check("board: a person's add from the board's own origin is 201", status == 201 and body["todo"]["subject"] == "from the board",
          (status, body))
    tid = body["todo"]["id"]
    with admin() as c:
        ev = c.execute("SELECT agent_id, action FROM todo.events WHERE tenant_id = 'acme' AND todo_id = %s", (tid,)).fetchall()
    check("board: the change is recorded as person:<label>", ev == [("person:Ada", "insert")], ev)

    status, _, body, _ = request("POST", "/v1/board/act", {"op": "edit", "id": tid, "version": 1, "subject": "renamed"}, tok=ada)
    check("board: an edit on the version read is 200", status == 200 and body["todo"]["version"] == 2, (status, body))
    status, _, body, _ = request("POST", "/v1/board/act", {"op": "edit", "id": tid, "version": 1, "subject": "stale"}, tok=ada)
    check("board: an edit on a version moved past is 409 with the todo as it is now",
          status == 409 and "changed since you read it" in body["error"] and body["current"]["subject"] == "renamed",
          (status, body))
    for bad, why in ((b"{", "malformed JSON"), (b"", "the body must be an action")):
        status, _, body, _ = request("POST", "/v1/board/act", tok=ada, raw=bad)
        check(f"board: a body {bad!r} is 400", status == 400 and why in body["error"], (status, body))
    status = request("GET", "/v1/board/act", tok=ada)[0]
    check("board: /v1/board/act takes POST only (405)", status == 405, status)

    status, _, body, _ = request("GET", f"/v1/board/todos/{tid}", tok=acme)
    check("board: the detail of a todo, with its history", status == 200 and body["todo"]["id"] == tid
          and [e["agent_id"] for e in body["history"]] == ["person:Ada", "person:Ada"], (status, body))
    status, _, body, _ = request("GET", f"/v1/board/todos/{tid}", tok=globex)
    check("board: another tenant's todo is not found", (status, body) == (404, {"error": "todo not found"}), (status, body))
    for bad in ("0", "-1", "x", "99999999999999999999"):
        status, _, body, _ = request("GET", f"/v1/board/todos/{bad}", tok=acme)
        check(f"board: detail of id {bad!r} is 400", (status, body) == (400, {"error": "bad todo id"}), (status, body))
    status = request("GET", f"/v1/board/todos/{tid}")[0]
    check("board: the detail needs a token", status == 401, status)


def test_health():
    """7a."""
    status, _, body, _ = request("GET", "/healthz")
    check("healthz: 200 ok", (status, body) == (200, {"status": "ok"}), (status, body))
    status, _, body, _ = request("GET", "/readyz")
    check("readyz: 200 ready", (status, body) == (200, {"status": "ready"}), (status, body))
    status, headers, body, raw = request("GET", "/")
    check("board: / is HTML without a token", status == 200 and headers["content-type"] == "text/html; charset=utf-8" and b"<" in raw,
          (status, headers))
    status, _, body, _ = request("GET", "/no/such/path", tok=ACME)
    check("unknown path: 404 not found", (status, body) == (404, {"error": "not found"}), (status, body))
    status, _, body, _ = request("GET", "/v1/board", tok=ACME)
    check("board: /v1/board is todo.board() of the token's tenant",
          status == 200 and body["tenant"] == "acme" and isinstance(body["conversations"], list), (status, body))


def gzip_answers(path, tok=None):
    """(identity, gzip) answers of GET `path`, each (status, headers, raw bytes): without
    Accept-Encoding, then with `gzip`. http.client decompresses nothing."""
    plain = request("GET", path, tok=tok)
    packed = request("GET", path, tok=tok, headers={"Accept-Encoding": "gzip, deflate, br"})
    return (plain[0], plain[1], plain[3]), (packed[0], packed[1], packed[3])


def timeless(raw):
    """A body with the board's "now" blanked: the only bytes of todo.board() that change from
    one read to the next."""
    return re.sub(rb'"now":("[^"]*"|[0-9.]+)', b'"now":0', raw, count=1)


def varies(headers):
    return "accept-encoding" in [v.strip().lower() for v in headers.get("vary", "").split(",")]


def test_compression(acme):
    """7b. The JSON answers and the board's files gzipped for a client that takes it (at least
    1 kB), to the byte what it would get without; Vary either way; never the event stream."""
    _, gz = token("acme", "gz-person", person=True)
    for i in range(12):
        request("POST", "/v1/todos", {"subject": f"a todo to make the board longer, #{i}", "conversation_id": "gzip"}, tok=acme)
    for path, tok in (("/v1/board", gz), ("/board/main.js", None), ("/", None), ("/openapi.json", None)):
        (s1, h1, plain), (s2, h2, packed) = gzip_answers(path, tok)
        check(f"gzip: {path} without Accept-Encoding is identity (at least 1 kB), with Vary",
              s1 == 200 and "content-encoding" not in h1 and varies(h1) and len(plain) >= 1024, (s1, h1, len(plain)))
        check(f"gzip: {path} with Accept-Encoding: gzip is gzip, with Vary, and decompresses to the identity body",
              s2 == 200 and h2.get("content-encoding") == "gzip" and varies(h2) and int(h2["content-length"]) == len(packed)
              and len(packed) < len(plain) and timeless(gzip.decompress(packed)) == timeless(plain), (s2, h2, len(packed), len(plain)))
        check(f"gzip: {path} has the same Content-Type either way", h1["content-type"] == h2["content-type"], (h1, h2))
    for accept, gzipped in (("gzip;q=0", False), ("GZIP;Q=0, *", False), ("identity", False), ("", False), ("br", False),
                            ("*", True), ("br;q=1, GZip;q=0.2", True), ("x-gzip", True)):
        for path, tok in (("/v1/board", gz), ("/board/main.js", None)):
            status, headers, _, raw = request("GET", path, tok=tok, headers={"Accept-Encoding": accept})
            check(f"gzip: {path} with Accept-Encoding {accept!r} is {'gzip' if gzipped else 'identity'}",
                  status == 200 and (headers.get("content-encoding") == "gzip") == gzipped and varies(headers)
                  and (raw[:2] == b"\x1f\x8b") == gzipped, (status, headers))
    status, headers, body, _ = request("GET", "/v1/todos/999999", tok=acme, headers={"Accept-Encoding": "gzip"})
    check("gzip: a short JSON answer (under 1 kB) is identity, with Vary",
          status == 404 and "content-encoding" not in headers and varies(headers) and body == {"error": "todo not found"},
          (status, headers, body))
    conn = http.client.HTTPConnection(HOST, MAIN.port, timeout=30)
    conn.request("GET", "/v1/events", headers={"Authorization": f"Bearer {gz}", "Accept-Encoding": "gzip"})
    events = conn.getresponse()
    request("POST", "/v1/todos", {"subject": "seen on the stream", "conversation_id": "gzip"}, tok=acme)
    first = events.readline()
    check("gzip: /v1/events is never compressed",
          events.status == 200 and events.getheader("Content-Type") == "text/event-stream"
          and events.getheader("Content-Encoding") is None and first.endswith(b"\n") and first[:2] != b"\x1f\x8b",
          (events.status, events.getheaders(), first))
    conn.close()


def test_board_files_revalidate():
    """7c. The board's files: a strong ETag (one per encoding), Cache-Control: no-cache, 304
    with no body to an If-None-Match that names it (weakly, in a list, or *), 200 otherwise;
    the page keeps its Content-Security-Policy on a 304."""
    for path, accept in (("/", None), ("/board/main.js", None), ("/board/main.js", "gzip"), ("/board/board.css", "gzip")):
        ae = {"Accept-Encoding": accept} if accept else {}
        status, headers, _, raw = request("GET", path, headers=ae)
        etag = headers.get("etag", "")
        check(f"etag: {path} ({accept or 'identity'}) has a strong ETag and Cache-Control: no-cache",
              status == 200 and etag.startswith('"') and not etag.startswith("W/") and len(etag) >= 18
              and headers["cache-control"] == "no-cache", (status, headers))
        for inm in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
            s2, h2, _, raw2 = request("GET", path, headers={**ae, "If-None-Match": inm})
            check(f"etag: {path} ({accept or 'identity'}) with If-None-Match {inm}: 304, no body, the same ETag and policy",
                  s2 == 304 and raw2 == b"" and h2.get("etag") == etag and h2.get("cache-control") == "no-cache"
                  and h2.get("content-security-policy") == headers["content-security-policy"] and varies(h2)
                  and "content-encoding" not in h2, (s2, h2, raw2[:40]))
        for inm in ('"0000000000000000"', f'"{etag[1:-1]}x"', etag[1:-1]):
            s3, h3, _, raw3 = request("GET", path, headers={**ae, "If-None-Match": inm})
            check(f"etag: {path} ({accept or 'identity'}) with If-None-Match {inm}: 200 and the whole file",
                  s3 == 200 and raw3 == raw and h3.get("etag") == etag, (s3, h3))
    _, plain, _, _ = request("GET", "/board/main.js")
    _, packed, _, _ = request("GET", "/board/main.js", headers={"Accept-Encoding": "gzip"})
    check("etag: the gzip and the identity of a file have different ETags", plain["etag"] != packed["etag"], (plain, packed))
    status = request("GET", "/board/main.js", headers={"Accept-Encoding": "gzip", "If-None-Match": plain["etag"]})[0]
    check("etag: the identity's ETag does not revalidate the gzip", status == 200, status)
    status, headers, _, _ = request("GET", "/", headers={"If-None-Match": request("GET", "/")[1]["etag"]})
    check("etag: the page's 304 keeps the board's Content-Security-Policy",
          status == 304 and "script-src 'self'" in headers["content-security-policy"], headers)


def test_listen_reconnect(acme):
    """5b/7. The database refusing connections: /readyz and REST 503; the LISTEN connection
    killed while a change commits: the change still arrives once it is back."""
    s = Sse(acme)
    s.wait(lambda d: d.get("type") == "server.connected", 5)
    n = len(s.messages)
    su = admin("postgres")  # a database cannot refuse connections while this session is in it
    writer = agent()  # opened before the database refuses connections
    try:
        su.execute(f'ALTER DATABASE "{DB}" WITH ALLOW_CONNECTIONS false')
        su.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pg_todos_serve'")
        time.sleep(0.5)
        status, _, body, _ = request("GET", "/readyz")
        check("readyz: 503 unavailable while the database refuses connections, without the database's words",
              status == 503 and body == {"status": "unavailable", "error": "database unavailable"}, (status, body))
        status, headers, body, _ = request("GET", "/v1/todos", tok=acme)
        check("errors: a request whose token cannot be looked up is 503 with Retry-After: 1, without the database's words",
              status == 503 and headers.get("retry-after") == "1" and body == {"error": "database unavailable"},
              (status, headers, body))
        writer.execute("SELECT todo.set_context('acme', 'while-down', 'psql')")
        writer.execute("INSERT INTO todo.todos (subject) VALUES ('committed while nobody listened')")
        writer.commit()
    finally:
        su.execute(f'ALTER DATABASE "{DB}" WITH ALLOW_CONNECTIONS true')
        writer.close()
        su.close()
    m = s.updated("while-down", 15, n)
    check("events: a change committed while the LISTEN connection was down arrives after it reconnects", m is not None, s.messages[n:])
    status, _, body, _ = request("GET", "/readyz")
    check("readyz: ready again", (status, body) == (200, {"status": "ready"}), (status, body))
    s.close()


def waiting_on_lock(timeout=10):
    deadline = time.time() + timeout
    with admin() as c:
        while time.time() < deadline:
            if c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_todos_serve' "
                         "AND wait_event_type = 'Lock'").fetchone()[0]:
                return True
            time.sleep(0.05)
    return False


def test_shutdown(acme):
    """7b. SIGTERM: in-flight requests finish, SSE ends, exit 0; past the grace, exit 1."""
    srv = Server("--shutdown-grace", "20")
    _, _, created, _ = request("POST", "/v1/todos", {"subject": "locked", "conversation_id": "shutdown"}, tok=acme, port=srv.port)
    tid = created["todo"]["id"]
    s = Sse(acme, port=srv.port)
    s.wait(lambda d: d.get("type") == "server.connected", 5)
    holder = admin()
    holder.execute("BEGIN")
    holder.execute("SELECT 1 FROM todo.todos WHERE tenant_id = 'acme' AND id = %s FOR UPDATE", (tid,))
    result = {}
    t = threading.Thread(target=lambda: result.update(r=request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"},
                                                                 tok=acme, port=srv.port)))
    t.start()
    check("shutdown: the PATCH waits on the row lock", waiting_on_lock(), "")
    srv.proc.send_signal(signal.SIGTERM)
    ended = s.ended.wait(5)
    check("shutdown: the SSE stream ends at SIGTERM", ended, "")
    # the streams are told to end just before the listener closes: allow it a moment
    refused, deadline = False, time.monotonic() + 2
    while not refused and time.monotonic() < deadline:
        try:
            socket.create_connection((HOST, srv.port), timeout=2).close()
            time.sleep(0.05)
        except OSError:
            refused = True
    check("shutdown: no new connections (within 2 s of SIGTERM)", refused, "")
    check("shutdown: the process waits for the request in flight", srv.proc.poll() is None, srv.proc.poll())
    holder.execute("COMMIT")
    holder.close()
    t.join(10)
    r = result.get("r")
    check("shutdown: the request in flight completes with 200",
          r is not None and r[0] == 200 and r[2]["todo"]["status"] == "in_progress", r)
    try:
        code = srv.proc.wait(10)
    except subprocess.TimeoutExpired:
        code = None
    check("shutdown: the process exits 0", code == 0, (code, srv.logtext()[-500:]))
    srv.stop()

    # past the grace
    srv = Server("--shutdown-grace", "1")
    holder = admin()
    holder.execute("BEGIN")
    holder.execute("SELECT 1 FROM todo.todos WHERE tenant_id = 'acme' AND id = %s FOR UPDATE", (tid,))
    result = {}

    def cut():
        try:
            result["r"] = request("PATCH", f"/v1/todos/{tid}", {"status": "completed"}, tok=acme, port=srv.port)
        except (OSError, http.client.HTTPException) as e:
            result["e"] = e
    t = threading.Thread(target=cut)
    t.start()
    waiting_on_lock()
    started = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    try:
        code = srv.proc.wait(10)
    except subprocess.TimeoutExpired:
        code = None
    took = time.monotonic() - started
    check("shutdown: past --shutdown-grace the process exits anyway (status 1)", code == 1 and 0.8 < took < 5, (code, took))
    t.join(10)
    check("shutdown: the cut request got no answer", "e" in result, result)
    holder.execute("COMMIT")
    holder.close()
    time.sleep(0.5)
    status = request("GET", f"/v1/todos/{tid}", tok=acme)[2]["todo"]["status"]
    check("shutdown: the cut request committed nothing", status == "in_progress", status)
    srv.stop()


def test_startup_errors():
    """8."""
    def run(*flags, **env):
        p = subprocess.run([SERVER, "serve", "--listen", f"{HOST}:{free_port()}", *flags], env=server_env(**env),
                           capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr.strip()
    dead = free_port()
    code, err = run("--database-url", f"host={HOST} port={dead} dbname={DB} user=agent_login")
    check("startup: an unreachable database: exit 2, one clear line",
          code == 2 and err.startswith("pg_todos serve: cannot connect to the database: ") and "\n" not in err, (code, err))
    with admin() as c:
        c.execute("DROP DATABASE IF EXISTS http_noext")
        c.execute("CREATE DATABASE http_noext")
    code, err = run(PGDATABASE="http_noext")
    check("startup: no extension: exit 2, CREATE EXTENSION named",
          code == 2 and err == 'pg_todos serve: the pg_todos extension is not installed in database "http_noext": CREATE EXTENSION pg_todos',
          (code, err))
    with admin() as c:
        c.execute("DROP ROLE IF EXISTS http_ungranted")
        c.execute("CREATE ROLE http_ungranted LOGIN")
    code, err = run(PGUSER="http_ungranted")
    check("startup: a role without todo.grant_usage: exit 2, grant_usage named",
          code == 2 and err == 'pg_todos serve: role "http_ungranted" may not execute todo.authenticate in database '
                               f'"{DB}": as an administrator, SELECT todo.grant_usage(\'http_ungranted\')', (code, err))
    with admin() as c:
        c.execute("DROP ROLE http_ungranted")
    code, err = run("--pool-size", "0")
    check("startup: a bad flag: exit 2 and the usage", code == 2 and "--pool-size" in err and "Usage: pg_todos serve" in err, (code, err))
    p = subprocess.run([SERVER, "serve", "--help"], capture_output=True, text=True, timeout=10)
    check("startup: --help prints the usage and every flag, exit 0", p.returncode == 0 and "Usage: pg_todos serve [OPTIONS]" in p.stdout and "--tenant-wait <SECONDS>" in p.stdout, p.returncode)


def test_the_whole_run_idle_stream_exit_and_log():
    idle, opened = IDLE["stream"], IDLE["opened"]
    time.sleep(max(0, opened + 16 - time.monotonic()))
    check("events: an idle stream gets the keep-alive comment ': ping' every 15 s",
          [c for _, c in idle.comments] == [": ping"] and 14.5 < idle.comments[0][0] - opened < 16, idle.comments)
    check("events: the idle stream is still open, through the LISTEN connection's loss", not idle.ended.is_set(), "")
    idle.close()
    code = MAIN.stop()
    check("main server: exits 0 at SIGTERM", code == 0, code)
    logs = "".join(open(os.path.join(LOGS, f)).read() for f in os.listdir(LOGS))
    check("log: one line per request, never a token or an Authorization header",
          "request method=GET path=/v1/todos route=/v1/todos status=200 " in logs and "pgt_" not in logs and "Bearer" not in logs and ACME not in logs,
          [l for l in logs.splitlines() if "pgt_" in l or "Bearer" in l][:3])
