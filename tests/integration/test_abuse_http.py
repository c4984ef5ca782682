#!/usr/bin/env python3
"""abuse_http: one hostile or broken client against `pg_todos serve`, over 127.0.0.1 only; each
limit of the service holds (docs/http.md, "Limits"):
  1. connections: 300 connections that send half a request's headers are closed after
     --header-timeout, and a valid request is served while they are held (past
     --max-connections they wait to be accepted); the same with 256 file descriptors (the cap
     is lowered to fit); an idle keep-alive connection is closed after --idle-timeout; a body
     that does not come is 408 after --body-timeout; a body over --max-body is 413 naming it;
  2. memory: 100 slow SSE readers catching up from Last-Event-ID 1:1: on a tenant of 300
     conversations keep the service's peak RSS (VmHWM) under RSS_BOUND_MB, and a reader that
     reads gets every conversation; a subscriber that reads nothing while large lists change
     is ended (the log says so, its connection closes) and the memory stays bounded;
  3. a revoked token's open stream ends within 5 s (--token-recheck 1); another token's stays;
  4. the stream caps: past --max-streams-per-token 429, past --max-streams 503, JSON errors;
  5. a tenant whose requests wait on a row lock holds at most --tenant-share connections;
     another tenant's GET meanwhile is 200; the tenant's excess is 503 with Retry-After;
  6. X-Actor: person is 403 from an agent's token, recorded from a person's; X-Agent-Id
     Person:… is 400;
  7. /readyz while the database refuses connections: 503 without the database's words (they
     are in the log);
  8. the board's page and files: a Content-Security-Policy allowing scripts and styles of its
     own origin only (the page holds no inline code), frame-ancestors 'none', X-Frame-Options:
     DENY, X-Content-Type-Options: nosniff;
  9. failed authentications: a client whose token authenticated keeps getting 200 while another
     client behind its address (127.0.0.2) is refused with 429; failed lookups over 40
     addresses together stay within PG_TODOS_AUTH_FAIL_GLOBAL_RATE; behind a trusted proxy
     (PG_TODOS_TRUSTED_PROXIES) each client named by X-Forwarded-For has its own bucket, an
     untrusted peer's header is ignored, and an IPv6 client is its /64.
Every loop is bounded in count and time; no check asserts a speed.
PGTODOS_MEASURE_SERVER=<a pg_todos binary> bin/test-integration test_abuse_http.py runs only the
slow-readers scenario with that binary (an older build too) and prints its peak RSS; with it,
PGTODOS_ABUSE_CONVERSATIONS and PGTODOS_ABUSE_TODOS_PER_LIST size the tenant (300 x 40).
"""
import http.client
import json
import os
import re
import secrets
import socket
import threading
import time

import psycopg
import pytest
from psycopg.types.json import Jsonb

import web
from checks import check
from web import HOST, Sse, request

DB = "abuse_http"
SERVER = None  # the fixture's: the built command, or PGTODOS_MEASURE_SERVER
MEASURE = bool(os.environ.get("PGTODOS_MEASURE_SERVER"))
# The peak RSS the service may reach with 100 slow readers catching up (MB). Each stream holds
# at most one page of the catch-up (256 KiB of lists, plus one list) and what the HTTP layer
# buffers (16 writes); 0.8.0 held every reader's whole catch-up.
RSS_BOUND_MB = 64
READERS = 100
# the tenant the readers catch up on (--measure may be given a larger one through the
# environment: PGTODOS_ABUSE_CONVERSATIONS, PGTODOS_ABUSE_TODOS_PER_LIST)
CONVERSATIONS = int(os.environ.get("PGTODOS_ABUSE_CONVERSATIONS", "300")) if MEASURE else 300
TODOS_PER_LIST = int(os.environ.get("PGTODOS_ABUSE_TODOS_PER_LIST", "40")) if MEASURE else 40


def Service(*flags, files=None, **env):
    """One `pg_todos serve` of the module's command (web.Server); `env`: its PG_TODOS_*
    settings (an older build measured with PGTODOS_MEASURE_SERVER ignores those it lacks)."""
    return web.Server(SERVER, DB, *flags, files=files, **env)


def admin(dbname=DB):
    return psycopg.connect(dbname=dbname, user="postgres", autocommit=True)


def agent():
    """A connection as the plain role agent_login, transactions explicit."""
    return psycopg.connect(dbname=DB, user="agent_login")


def token(tenant, label, person=False):
    return web.token(DB, tenant, label, person)


TOKENS = {}


@pytest.fixture(scope="module", autouse=True)
def abuse_database(cluster, cli):
    global SERVER
    SERVER = os.environ.get("PGTODOS_MEASURE_SERVER") or cli
    cluster.database(DB, tenants=["acme", "globex", "big"])
    TOKENS["acme"] = token("acme", "ci-bot")[1]
    TOKENS["globex"] = token("globex", "globex-bot")[1]
    # 13 tokens of tenant big: 100 streams within 8 per token
    TOKENS["big"] = [token("big", f"reader-{i}")[1] for i in range(13)]
    fill_big_tenant()


@pytest.fixture
def acme():
    return TOKENS["acme"]


@pytest.fixture
def globex():
    return TOKENS["globex"]


@pytest.fixture
def tokens():
    return TOKENS["big"]


@pytest.fixture(autouse=True)
def only_measuring(request):
    if MEASURE and request.function.__name__ != "test_memory":
        pytest.skip("PGTODOS_MEASURE_SERVER: only the slow readers are measured")


def half_header(port):
    """A connection that sends half a request's headers and then nothing."""
    s = socket.create_connection((HOST, port), timeout=5)
    s.sendall(b"GET /v1/todos HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return s


def closed_within(socks, timeout):
    """How many of `socks` the server closed (EOF or reset) within `timeout` seconds in all."""
    deadline = time.monotonic() + timeout
    closed = 0
    for s in socks:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            s.settimeout(min(left, 1.0))
            try:
                data = s.recv(4096)
                if data == b"":
                    closed += 1
                    break
            except socket.timeout:
                continue
            except OSError:
                closed += 1
                break
    return closed


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def raw(port, data, timeout=30):
    """Sends `data` on a new connection; (status, body) of the answer, read to the end."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        while True:
            try:
                part = s.recv(65536)
            except OSError:
                break
            if not part:
                break
            got += part
            head, _, body = got.partition(b"\r\n\r\n")
            m = re.search(rb"(?i)content-length: *(\d+)", head)
            if m and len(body) >= int(m.group(1)):
                break
    head, _, body = got.partition(b"\r\n\r\n")
    return (int(head.split(b" ")[1]) if head else None), body


# ---------------------------------------------------------------------------------------------

def test_connections(acme):
    """1. Half-sent headers, idle keep-alive, slow bodies, 413."""
    srv = Service("--header-timeout", "2", "--idle-timeout", "2", "--body-timeout", "2",
                  "--max-connections", "100", "--max-body", "1000")
    held = []
    try:
        for _ in range(300):
            held.append(half_header(srv.port))
        status, _, body, _ = request("GET", "/v1/todos", tok=acme, port=srv.port, timeout=60)
        check("connections: a valid request is served while 300 half-header connections are held (cap 100)",
              status == 200 and "todos" in body, (status, body))
        closed = closed_within(held, 30)
        check("connections: all 300 half-header connections are closed after --header-timeout", closed == 300, closed)
        check("connections: the service still answers", request("GET", "/healthz", port=srv.port)[0] == 200)

        # an idle keep-alive connection
        s = socket.create_connection((HOST, srv.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = s.recv(4096)
        check("connections: a keep-alive request is answered", first.startswith(b"HTTP/1.1 200"), first[:40])
        check("connections: an idle keep-alive connection is closed after --idle-timeout", closed_within([s], 15) == 1)
        s.close()
        # the headers of a later request on a connection get --header-timeout too
        s = socket.create_connection((HOST, srv.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        check("connections: a half-sent second request is cut too", closed_within([s], 15) == 1)
        s.close()

        # a body that does not come
        status, body = raw(srv.port, (f"POST /v1/todos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {acme}\r\n"
                                      "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"subject\":").encode())
        check("connections: a body not sent within --body-timeout is 408 with a JSON error",
              status == 408 and json.loads(body) == {"error": "request body not received within 2 s"}, (status, body))
        # a body over --max-body
        status, _, body, _ = request("POST", "/v1/todos", {"subject": "x" * 2000}, tok=acme, port=srv.port)
        check("connections: a body over --max-body is 413 and says the limit",
              (status, body) == (413, {"error": "request body is larger than 1000 bytes"}), (status, body))
    finally:
        close_all(held)
        srv.stop()

    # 256 file descriptors: the cap is lowered to fit, and a valid request is still served
    srv = Service("--header-timeout", "2", files=256)
    held = []
    try:
        check("connections: with 256 file descriptors --max-connections is lowered to fit (207)",
              "--max-connections 1024 lowered to 207" in srv.logtext(), srv.logtext()[-300:])
        for _ in range(300):
            held.append(half_header(srv.port))
        status = request("GET", "/v1/todos", tok=acme, port=srv.port, timeout=60)[0]
        check("connections: with 256 file descriptors and 300 held connections a valid request is served", status == 200, status)
        closed = closed_within(held, 30)
        check("connections: with 256 file descriptors every held connection is closed in time", closed == 300, closed)
        check("connections: no accept error (out of file descriptors) in the log", "accept:" not in srv.logtext(),
              [l for l in srv.logtext().splitlines() if "accept" in l][:3])
    finally:
        close_all(held)
        srv.stop()


def fill_big_tenant():
    """CONVERSATIONS conversations of TODOS_PER_LIST todos each in tenant big (plain SQL)."""
    with agent() as c:
        c.execute("SELECT todo.set_context('big', NULL, 'loader')")
        c.execute("""INSERT INTO todo.todos (subject, conversation_id)
                     SELECT 'a todo with a long enough subject to make the lists weigh something, number ' || i
                            || repeat(' and more', 8), 'conv-' || (i %% %s)
                       FROM generate_series(1, %s) i""", (CONVERSATIONS, CONVERSATIONS * TODOS_PER_LIST))
        c.commit()


def open_stream(port, tok, last_event_id=None, rcvbuf=None):
    """A raw SSE connection (small receive buffer when given); returns it once the response's
    status line is read, with what was read so far."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(30)
    s.connect((HOST, port))
    extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
    s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {tok}\r\n{extra}\r\n".encode())
    got = s.recv(1024)
    return s, got


class Chunks:
    """Decodes an HTTP/1.1 chunked body fed in pieces."""

    def __init__(self):
        self.raw = b""
        self.left = 0  # bytes of the current chunk still to come

    def feed(self, data):
        self.raw += data
        out = b""
        while self.raw:
            if self.left > 0:
                take = self.raw[:self.left]
                out += take
                self.raw = self.raw[len(take):]
                self.left -= len(take)
                if self.left == 0:
                    self.left = -2  # the CRLF after the chunk
                continue
            if self.left < 0:
                skip = min(-self.left, len(self.raw))
                self.raw = self.raw[skip:]
                self.left += skip
                continue
            line, sep, rest = self.raw.partition(b"\r\n")
            if not sep:
                break
            self.raw = rest
            self.left = int(line.split(b";")[0], 16)
            if self.left == 0:
                break
        return out


def read_catch_up(s, first, timeout):
    """Reads a stream at full speed until the catch-up's last message (the first todo.updated
    with an id); the set of sessions seen, and whether that message came. `first`: what was
    read with the status line."""
    chunks = Chunks()
    buf = chunks.feed(first.partition(b"\r\n\r\n")[2])
    sessions = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while b"\n\n" in buf:
            event, _, buf = buf.partition(b"\n\n")
            lines = event.decode(errors="replace").split("\n")
            has_id = any(l.startswith("id: ") for l in lines)
            data = [l[6:] for l in lines if l.startswith("data: ")]
            if not data:
                continue
            d = json.loads(data[0])
            if d.get("type") == "todo.updated":
                sessions.add(d["properties"]["sessionID"])
                if has_id:
                    return sessions, True
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            part = s.recv(65536)
        except OSError:
            break
        if not part:
            break
        buf += chunks.feed(part)
    return sessions, False


def slow_readers(tokens, flags=()):
    """READERS streams from Last-Event-ID 1:1: that read nothing after their first bytes; the
    service's peak RSS in MB, whether each got 200, and a reader's catch-up. They are all of
    tenant big: its share of the streams and of the catch-ups is raised to hold them all (each
    holds at most a page; test_serve_limits.py bounds how many hold one)."""
    srv = Service(*flags, PG_TODOS_MAX_STREAMS_PER_TENANT=str(READERS), PG_TODOS_TENANT_CATCH_UPS=str(READERS))
    socks = []
    try:
        before = srv.status("VmRSS")
        oks = 0
        for i in range(READERS):
            s, got = open_stream(srv.port, tokens[i % len(tokens)], "1:1:", rcvbuf=16384)
            socks.append((s, got))
            oks += got.startswith(b"HTTP/1.1 200")
        # let the service push what it can into the stalled connections
        peak_seen = 0
        for _ in range(40):
            time.sleep(0.25)
            peak_seen = max(peak_seen, srv.status("VmRSS"))
        hwm = srv.status("VmHWM")
        # three readers now read at full speed: every conversation comes
        complete = []
        for s, got in socks[:3]:
            sessions, ended = read_catch_up(s, got, 60)
            complete.append((len(sessions), ended))
        return before / 1024, peak_seen / 1024, hwm / 1024, oks, complete, srv
    finally:
        close_all(s for s, _ in socks)


def test_memory(tokens):
    """2. 100 slow SSE readers; a subscriber that reads nothing."""
    before, peak, hwm, oks, complete, srv = slow_readers(tokens)
    srv.stop()
    print(f"measured: {READERS} slow SSE readers from 1:1: over {CONVERSATIONS} conversations x {TODOS_PER_LIST} todos: "
          f"RSS {before:.0f} MB before, {peak:.0f} MB at most while they were open, VmHWM {hwm:.0f} MB")
    check(f"memory: {READERS} slow readers from Last-Event-ID 1:1: all get 200", oks == READERS, oks)
    check(f"memory: {READERS} slow readers keep the service's peak RSS under {RSS_BOUND_MB} MB", hwm < RSS_BOUND_MB, f"{hwm:.0f} MB")
    check(f"memory: a reader that reads gets all {CONVERSATIONS} conversations, then the catch-up's id",
          all(c == (CONVERSATIONS, True) for c in complete), complete)

    # a subscriber that reads nothing while a large list changes: its queue is emptied once it
    # is 256 KiB behind, and the connection is closed after --send-timeout (5 s here), whichever
    # is seen first (the service polls a stream only when the client takes what was sent)
    srv = Service("--stream-buffer", "262144", "--send-timeout", "5")
    try:
        tok = tokens[0]
        stalled, _ = open_stream(srv.port, tok, rcvbuf=4096)
        watcher = Sse(tok, port=srv.port)
        watcher.wait(lambda d: d.get("type") == "server.connected", 5)
        # each change's message is ~250 KB; more than the kernel's socket buffers and hyper's
        # write queue (16 writes) hold must be sent before the queue's budget is passed, and
        # notifications that come together are read once: a pause after each change
        items = [{"content": f"item {i} " + "of a large list " * 36, "status": "pending", "priority": "medium", "id": str(i)}
                 for i in range(400)]
        for n in range(60):
            items[n]["status"] = "completed"
            with agent() as c:
                c.execute("SELECT todo.set_context('big', 'large-list', 'writer')")
                c.execute("SELECT todo.call('todowrite', %s)", (Jsonb({"todos": items}),))
                c.commit()
            time.sleep(0.05)
        ended = srv.wait_log(r"fell more than 262144 bytes behind: ended|a connection closed: send timeout", 15)
        check("memory: a subscriber that reads nothing is ended (past --stream-buffer or --send-timeout; the log says so)",
              ended, srv.logtext()[-400:])
        check("memory: its connection is closed (read what was sent, then EOF)", closed_within([stalled], 15) == 1)
        stalled.close()
        last = watcher.updated("large-list", 10, 0, lambda todos: sum(t["status"] == "completed" for t in todos) == 60)
        check("memory: a subscriber that reads gets the last state of the large list meanwhile", last is not None,
              len(watcher.messages))
        check("memory: the reading subscriber's stream was not ended", not watcher.ended.is_set())
        watcher.close()
        hwm = srv.status("VmHWM") / 1024
        print(f"measured: a stalled subscriber and 60 changes of a 400-todo list: VmHWM {hwm:.0f} MB")
        check(f"memory: with a stalled subscriber the peak RSS stays under {RSS_BOUND_MB} MB", hwm < RSS_BOUND_MB, f"{hwm:.0f} MB")
    finally:
        srv.stop()


def test_revoked_stream(acme):
    """3. A revoked token's stream ends within seconds."""
    srv = Service("--token-recheck", "1")
    try:
        rid, revoked = token("acme", "to-be-revoked")
        r = Sse(revoked, port=srv.port)
        k = Sse(acme, port=srv.port)
        r.wait(lambda d: d.get("type") == "server.connected", 5)
        k.wait(lambda d: d.get("type") == "server.connected", 5)
        with admin() as c:
            c.execute("SELECT todo.revoke_token(%s)", (rid,))
        check("revocation: the revoked token's open stream ends within 5 s", r.ended.wait(5))
        check("revocation: another token's stream stays open", not k.ended.is_set())
        check("revocation: the revoked token's next request is 401", request("GET", "/v1/todos", tok=revoked, port=srv.port)[0] == 401)
        r.close()
        k.close()
    finally:
        srv.stop()


def test_stream_caps():
    """4. Streams per token and in all (test_serve_limits.py: per tenant)."""
    srv = Service("--max-streams", "3", "--max-streams-per-token", "2", "--max-streams-per-tenant", "3")
    opened = []
    try:
        a, b = (token("acme", f"streams-{x}")[1] for x in "ab")
        c = token("globex", "streams-c")[1]
        opened += [Sse(a, port=srv.port), Sse(a, port=srv.port)]
        third = Sse(a, port=srv.port)
        body = json.loads(third.body) if third.status != 200 else None
        check("streams: past --max-streams-per-token: 429 with a JSON error naming the cap",
              third.status == 429 and "2 event streams" in body["error"], (third.status, body))
        opened.append(Sse(b, port=srv.port))
        full = Sse(c, port=srv.port)
        body = json.loads(full.body) if full.status != 200 else None
        check("streams: past --max-streams: 503 with a JSON error naming the cap",
              full.status == 503 and "3 event streams" in body["error"], (full.status, body))
        opened.pop(0).close()
        again = None
        for _ in range(20):  # the closed stream's place comes back once the service sees it closed
            again = Sse(c, port=srv.port)
            if again.status == 200:
                break
            time.sleep(0.1)
        check("streams: a closed stream's place is given again", again is not None and again.status == 200,
              again and again.status)
        if again is not None:
            opened.append(again)
    finally:
        for s in opened:
            s.close()
        srv.stop()


def lock_waiters():
    with admin() as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_todos_serve' "
                         "AND wait_event_type = 'Lock'").fetchone()[0]


def test_tenant_share(acme, globex):
    """5. One tenant waiting on its own lock does not take the pool."""
    srv = Service("--pool-size", "6", "--tenant-share", "2", "--tenant-wait", "2")
    _, _, created, _ = request("POST", "/v1/todos", {"subject": "contended", "conversation_id": "share"}, tok=acme, port=srv.port)
    tid = created["todo"]["id"]
    holder = admin()
    holder.execute("BEGIN")
    holder.execute("SELECT 1 FROM todo.todos WHERE tenant_id = 'acme' AND id = %s FOR UPDATE", (tid,))
    results = []
    lock = threading.Lock()

    def hammer():
        try:
            r = request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"}, tok=acme, port=srv.port, timeout=40)
        except OSError as e:
            r = (None, {}, str(e), b"")
        with lock:
            results.append(r)
    threads = [threading.Thread(target=hammer) for _ in range(20)]
    try:
        for t in threads:
            t.start()
        most = 0
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            most = max(most, lock_waiters())
            time.sleep(0.05)
        check("share: the tenant's requests waiting on its lock hold at most --tenant-share (2) connections",
              most == 2, most)
        status, _, body, _ = request("GET", "/v1/todos", tok=globex, port=srv.port, timeout=30)
        check("share: meanwhile another tenant's GET is served (200)", status == 200 and "todos" in body, (status, body))
        for t in threads[:]:
            t.join(0)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with lock:
                if sum(1 for r in results if r[0] == 503) >= 18:
                    break
            time.sleep(0.1)
        with lock:
            busy = [r for r in results if r[0] == 503]
        check("share: the tenant's excess is 503 with Retry-After: 1 and a JSON error, after --tenant-wait",
              len(busy) == 18 and all(r[1].get("retry-after") == "1" and "database operations running already" in r[2]["error"]
                                      for r in busy), [(r[0], r[2]) for r in busy[:2]] + [len(busy)])
    finally:
        holder.execute("COMMIT")
        holder.close()
        for t in threads:
            t.join(40)
        srv.stop()
    done = [r[0] for r in results if r[0] != 503]
    check("share: the two that waited on the lock complete once it is released", done == [200, 200], done)


def test_actor(acme):
    """6. X-Actor: person."""
    srv = Service()
    try:
        _, ada = token("acme", "ada-person", person=True)
        _, _, created, _ = request("POST", "/v1/todos", {"subject": "who acts", "conversation_id": "actor"}, tok=acme, port=srv.port)
        tid = created["todo"]["id"]
        status, _, body, _ = request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"}, tok=acme, port=srv.port,
                                     headers={"X-Actor": "person"})
        check("actor: X-Actor: person from an agent's token is 403 with a JSON error",
              status == 403 and "made for a person" in body["error"], (status, body))
        status, _, body, _ = request("PATCH", f"/v1/todos/{tid}", {"status": "in_progress"}, tok=ada, port=srv.port,
                                     headers={"X-Actor": "PERSON"})
        with admin() as c:
            who = c.execute("SELECT agent_id FROM todo.events WHERE tenant_id = 'acme' AND todo_id = %s "
                            "ORDER BY version DESC LIMIT 1", (tid,)).fetchone()[0]
        check("actor: X-Actor: person from a person's token is recorded as person:<label>",
              status == 200 and who == "person:ada-person", (status, who))
        status, _, body, _ = request("PATCH", f"/v1/todos/{tid}", {"status": "completed"}, tok=acme, port=srv.port,
                                     headers={"X-Agent-Id": "Person:ada-person"})
        check("actor: X-Agent-Id Person:… is 400", (status, body) == (400, {"error": "X-Agent-Id may not start with person:"}),
              (status, body))
    finally:
        srv.stop()


def test_readyz():
    """7. /readyz never shows the database's words."""
    srv = Service()
    su = admin("postgres")
    try:
        su.execute(f'ALTER DATABASE "{DB}" WITH ALLOW_CONNECTIONS false')
        su.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pg_todos_serve'")
        time.sleep(0.5)
        status, _, body, raw_body = request("GET", "/readyz", port=srv.port)
        check("readyz: 503 with no database text while the database refuses connections",
              status == 503 and body == {"status": "unavailable", "error": "database unavailable"}, (status, raw_body))
        check("readyz: the cause is in the service's log", srv.wait_log(r"not ready: .*(55000|not currently accepting)", 5),
              srv.logtext()[-300:])
    finally:
        su.execute(f'ALTER DATABASE "{DB}" WITH ALLOW_CONNECTIONS true')
        su.close()
        srv.stop()


def test_board_headers(acme):
    """8. The board's security headers."""
    srv = Service()
    try:
        status, headers, page, _ = request("GET", "/", port=srv.port)
        policy = headers.get("content-security-policy", "")
        directives = dict((d.strip().split(" ", 1) + [""])[:2] for d in policy.split(";") if d.strip())
        check("board: Content-Security-Policy allows scripts and styles of its own origin only (no inline code, no hash)",
              directives.get("script-src") == "'self'" and directives.get("style-src") == "'self'", policy)
        check("board: the page holds no inline script, style or event handler",
              status == 200 and "<script>" not in page and "<style" not in page and " style=" not in page
              and not re.search(r" on[a-z]+=", page), page[:300])
        check("board: no unsafe-*; default-src 'none'; requests to its own origin only",
              "unsafe" not in policy and directives.get("default-src") == "'none'"
              and directives.get("connect-src") == "'self'", policy)
        for src in re.findall(r'(?:src|href)="(/board/[^"]+)"', page):
            st, h, _, _ = request("GET", src, port=srv.port)
            check(f"board: {src} is served under the same policy, nosniff",
                  st == 200 and h.get("content-security-policy") == policy and h.get("x-content-type-options") == "nosniff",
                  (st, h))
        st, _, _, _ = request("GET", "/board/../openapi.json", port=srv.port)
        check("board: a path outside the board's files is not one of them", st == 404, st)
        check("board: it cannot be framed (frame-ancestors 'none', X-Frame-Options: DENY)",
              directives.get("frame-ancestors") == "'none'" and headers.get("x-frame-options") == "DENY", (policy, headers))
        check("board: X-Content-Type-Options: nosniff", headers.get("x-content-type-options") == "nosniff", headers)
        status, headers, _, _ = request("GET", "/v1/board", tok=acme, port=srv.port)
        check("board: /v1/board carries nosniff and frame-ancestors 'none' too",
              status == 200 and headers.get("x-content-type-options") == "nosniff"
              and "frame-ancestors 'none'" in headers.get("content-security-policy", ""), headers)
    finally:
        srv.stop()


def from_address(address, port, tok, forwarded=None):
    """The status of one GET /v1/todos from the local `address` (127.0.0.2 …, all loopback)
    with bearer `tok`, and `X-Forwarded-For: forwarded` when given."""
    c = http.client.HTTPConnection(HOST, port, timeout=30, source_address=(address, 0))
    headers = {"Authorization": f"Bearer {tok}"}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    try:
        c.request("GET", "/v1/todos", headers=headers)
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def bad_token():
    return "pgt_" + secrets.token_hex(32)


def test_failed_authentications_behind_a_shared_address():
    """9. The failed-authentication limiter never refuses a token that authenticates for
    someone else's failures: a good client and a bad one behind one address (127.0.0.2), a
    limit over every address (PG_TODOS_AUTH_FAIL_GLOBAL_RATE), clients named by a trusted
    proxy's X-Forwarded-For (PG_TODOS_TRUSTED_PROXIES), IPv6 clients by their /64."""
    good = token("acme", "behind-nat")[1]
    srv = Service(PG_TODOS_AUTH_FAIL_BURST="5", PG_TODOS_AUTH_FAIL_RATE="0.01",
                  PG_TODOS_AUTH_FAIL_GLOBAL_RATE="2", PG_TODOS_TRUSTED_PROXIES="127.0.0.5")
    try:
        first = from_address("127.0.0.2", srv.port, good)
        flood = [from_address("127.0.0.2", srv.port, bad_token()) for _ in range(20)]
        check("shared address: the bad client gets 401 for its burst (5), then 429",
              first == 200 and flood == [401] * 5 + [429] * 15, (first, flood))
        after = [from_address("127.0.0.2", srv.port, good) for _ in range(11)]
        check("shared address: the good client's 11 requests after the flood are all 200",
              after == [200] * 11, after)
        # every address together: 2 failures a second, a burst of 5 (one address's)
        start = time.monotonic()
        spread = [from_address(f"127.0.1.{i}", srv.port, bad_token()) for i in range(1, 41)]
        allowed = 5 + 2 * (time.monotonic() - start) + 1
        check("many addresses: their failed lookups together stay within the service's limit, then 429",
              spread.count(401) <= allowed and spread.count(429) >= 40 - allowed
              and set(spread) <= {401, 429}, (spread, allowed))
        check("many addresses: meanwhile the known good token is still 200 from another address",
              from_address("127.0.0.3", srv.port, good) == 200)
    finally:
        srv.stop()
    srv = Service(PG_TODOS_AUTH_FAIL_BURST="3", PG_TODOS_AUTH_FAIL_RATE="0.01",
                  PG_TODOS_TRUSTED_PROXIES="127.0.0.5")
    try:
        proxied = [from_address("127.0.0.5", srv.port, bad_token(), forwarded="198.51.100.1") for _ in range(5)]
        other = token("acme", "behind-proxy")[1]
        check("trusted proxy: a client named by X-Forwarded-For is limited alone (401 ×3, then 429)",
              proxied == [401] * 3 + [429] * 2, proxied)
        check("trusted proxy: another client behind the same proxy, with a new good token, gets 200",
              from_address("127.0.0.5", srv.port, other, forwarded="198.51.100.2") == 200)
        spoofed = [from_address("127.0.0.6", srv.port, bad_token(), forwarded=f"203.0.113.{i}") for i in range(5)]
        check("untrusted peer: its X-Forwarded-For is ignored (limited by its own address)",
              spoofed == [401] * 3 + [429] * 2, spoofed)
        v6 = [from_address("127.0.0.5", srv.port, bad_token(), forwarded="2001:db8:1:2::1") for _ in range(3)]
        same64 = from_address("127.0.0.5", srv.port, token("acme", "v6-same")[1], forwarded="2001:db8:1:2::99")
        next64 = from_address("127.0.0.5", srv.port, token("acme", "v6-next")[1], forwarded="2001:db8:1:3::1")
        check("IPv6: a client is its /64 (another address of the same /64 waits, the next /64 does not)",
              v6 == [401] * 3 and same64 == 429 and next64 == 200, (v6, same64, next64))
    finally:
        srv.stop()
