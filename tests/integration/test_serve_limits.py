#!/usr/bin/env python3
"""serve_limits: what one tenant, one token or one client address may hold of `pg_todos serve`,
over 127.0.0.1 only (docs/http.md, "Limits"):
  1. streams per tenant: with --max-streams 16 (so --max-streams-per-tenant defaults to 2),
     16 tokens of one tenant open 2 event streams and are refused the other 14 (429, a JSON
     error naming --max-streams-per-tenant); another tenant still opens one; the variable
     PG_TODOS_MAX_STREAMS_PER_TENANT sets it.
  2. revocation at once: with --token-recheck 60 (the periodic check out of the way), a token
     is revoked and a change committed right after; the revoked token's stream delivers
     nothing of it and ends, while another token's stream of the tenant delivers it and stays;
     a stream catching up from Last-Event-ID (300 conversations, its client not reading) whose
     token is revoked, then a conversation written: read to the end, it ends and never
     delivers that conversation.
  3. catch-up memory: a tenant with one list of 10,000 todos (7 MB of JSON, the extension's
     list limits raised); 8 readers (2 tokens) catch up from Last-Event-ID 1:1: and read
     nothing. A catch-up holds at most one page, and at most --tenant-catch-ups (4) of the
     tenant's streams hold one at once: 4 readers get their page (200), the other 4 wait
     --tenant-wait (1 s here) and are refused (503, Retry-After, a JSON
     error naming --tenant-catch-ups), the service's peak RSS (VmHWM) stays under
     CATCH_UP_BOUND_MB; once they are closed, a reader that reads gets the whole list and the
     catch-up's id, and another tenant's catch-up is never refused meanwhile.
  4. /mcp and bad input: a body that is not JSON, or JSON that is not, is 400 with a JSON-RPC
     parse error (-32700), whatever its Content-Type; JSON that is no JSON-RPC message is 400
     (-32600); a JSON-RPC message sent as another Content-Type is 415 with a JSON-RPC error; a
     string holding U+0000 in a tool's name or arguments, or in ?list=, is 400 saying to remove
     it, never PostgreSQL's 22021 or 22P05; /session/<id holding U+0000>/todo is 400, not 500;
     a tool call the database refuses for a reason that is not the caller's (a revoked
     privilege) says "internal error", never the database's words (they are in the log).
  5. failed authentications per client address: with a burst of 5 and 0.01 a second (through
     PG_TODOS_AUTH_FAIL_BURST and PG_TODOS_AUTH_FAIL_RATE), a client at 127.0.0.2 sending 20
     bad tokens gets 401 for 5 and 429 (Retry-After, a JSON error naming the settings) for 15,
     and its next request is 429 even with a valid token that has not authenticated yet (the
     service cannot tell it from the failures without a lookup); meanwhile another client (127.0.0.3,
     another tenant's token) gets 200 every time; the database was asked about a token only
     for the 5 refused with 401 and the other client's requests (pg_stat_user_functions).
     Then, with the defaults, the other client's GET latency without and during a flood of
     bad tokens from one address is printed (a measurement, not a check).
Every loop is bounded in count and time; no check asserts a speed.
"""
import http.client
import json
import secrets
import socket
import threading
import time

import psycopg

import web
from checks import check
from web import HOST, Sse

DB = "serve_limits"
TOKENS = {}


def token(tenant, label, person=False):
    return web.token(DB, tenant, label, person)


def admin():
    return psycopg.connect(dbname=DB, user="postgres", autocommit=True)


def fill(tenant, conversations, todos_per_list, subject_words=8):
    """`conversations` conversations (conv-0 …) of `todos_per_list` todos each in `tenant`, by
    plain SQL as agent_login."""
    with psycopg.connect(dbname=DB, user="agent_login") as c:
        c.execute("SELECT todo.set_context(%s, NULL, 'loader')", (tenant,))
        c.execute("""INSERT INTO todo.todos (subject, conversation_id)
                     SELECT 'a todo with a long enough subject to make the lists weigh something, number ' || i
                            || repeat(' and more', %s), 'conv-' || (i %% %s)
                       FROM generate_series(1, %s) i""", (subject_words, conversations, conversations * todos_per_list))
        c.commit()


def raw_stream(port, tok, last_event_id=None, rcvbuf=None):
    """A raw GET /v1/events (a small receive buffer when given): the socket and its first bytes
    (the status line at least)."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(30)
    s.connect((HOST, port))
    extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
    s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {tok}\r\n{extra}\r\n".encode())
    return s, s.recv(1024)


def read_to_end(s, first, timeout):
    """Reads the stream until its body ends (its last chunk, or the connection closed) or
    `timeout` s pass: (its SSE messages as (id, data), whether it ended). `first`: what was
    read with the status line."""
    got = first
    ended = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if dechunk(got.partition(b"\r\n\r\n")[2])[1]:
            ended = True
            break
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            part = s.recv(262144)
        except socket.timeout:
            break
        except OSError:
            ended = True
            break
        if not part:
            ended = True
            break
        got += part
    body = dechunk(got.partition(b"\r\n\r\n")[2])[0]
    messages = []
    for event in body.split(b"\n\n"):
        lines = event.decode(errors="replace").split("\n")
        data = [l[6:] for l in lines if l.startswith("data: ")]
        ids = [l[4:] for l in lines if l.startswith("id: ")]
        if data:
            try:
                messages.append((ids[0] if ids else None, json.loads(data[0])))
            except ValueError:  # the last message, cut by the timeout
                pass
    return messages, ended


def dechunk(raw):
    """An HTTP/1.1 chunked body's data as far as it came, and whether its last chunk came."""
    out = []
    while raw:
        line, sep, rest = raw.partition(b"\r\n")
        if not sep:
            break
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return b"".join(out), True
        if len(rest) < size + 2:
            out.append(rest[:size])
            break
        out.append(rest[:size])
        raw = rest[size + 2:]
    return b"".join(out), False


def test_streams_per_tenant(cluster, serve):
    """1. One tenant's tokens cannot take every stream of the service."""
    cluster.database(DB, tenants=["acme", "globex"])
    many = [token("acme", f"tab-{i}")[1] for i in range(16)]
    _, other = token("globex", "globex-board")
    srv = serve(DB, "--max-streams", "16")
    opened = []
    try:
        answers = []
        for tok in many:
            s = Sse(tok, port=srv.port)
            opened.append(s)
            answers.append((s.status, json.loads(s.body) if s.status != 200 else None, s))
        ok = [a for a in answers if a[0] == 200]
        refused = [a for a in answers if a[0] != 200]
        check("streams per tenant: 16 tokens of one tenant open 2 streams (an eighth of --max-streams 16)",
              len(ok) == 2, [a[0] for a in answers])
        check("streams per tenant: the other 14 are 429 with Retry-After and a JSON error naming the limit and its setting",
              len(refused) == 14 and all(
                  a[0] == 429 and a[2].resp.getheader("Retry-After") is not None
                  and a[1]["error"] == "this tenant has 2 event streams open, as many as one tenant may "
                                       "(--max-streams-per-tenant); close one first" for a in refused),
              [(a[0], a[1]) for a in refused[:2]])
        g = Sse(other, port=srv.port)
        opened.append(g)
        check("streams per tenant: meanwhile another tenant opens a stream (200, server.connected)",
              g.status == 200 and g.wait(lambda d: d.get("type") == "server.connected", 5) is not None,
              (g.status, getattr(g, "body", None)))
        # a stream of the tenant closed gives its place back
        ok[0][2].close()
        again = None
        for _ in range(20):
            again = Sse(many[-1], port=srv.port)
            opened.append(again)
            if again.status == 200:
                break
            again.close()
            time.sleep(0.1)
        check("streams per tenant: a closed stream's place is the tenant's again", again.status == 200, again.status)
    finally:
        for s in opened:
            s.close()
        srv.stop()

    srv = serve(DB, PG_TODOS_MAX_STREAMS_PER_TENANT="3")
    opened = []
    try:
        statuses = []
        for tok in many[:4]:
            s = Sse(tok, port=srv.port)
            opened.append(s)
            statuses.append(s.status)
        check("streams per tenant: PG_TODOS_MAX_STREAMS_PER_TENANT=3 lets 3 open and refuses the 4th",
              statuses == [200, 200, 200, 429], statuses)
    finally:
        for s in opened:
            s.close()
        srv.stop()


def test_revocation_at_once(cluster, serve):
    """2. Nothing committed after a token's revocation reaches its stream."""
    cluster.database(DB, tenants=["acme", "globex", "initech"])
    fill("initech", 300, 40)
    rid, revoked = token("acme", "to-be-revoked")
    _, kept = token("acme", "kept")
    srv = serve(DB, "--token-recheck", "60")
    r = k = None
    try:
        r = Sse(revoked, port=srv.port)
        k = Sse(kept, port=srv.port)
        check("revocation: both streams open", r.wait(lambda d: d.get("type") == "server.connected", 5) is not None
              and k.wait(lambda d: d.get("type") == "server.connected", 5) is not None, (r.status, k.status))
        with admin() as c:
            c.execute("SELECT todo.revoke_token(%s)", (rid,))
        status, _, body, _ = srv.request("POST", "/v1/todos", {"subject": "written after the revocation",
                                                                "conversation_id": "after-revocation"}, tok=kept)
        check("revocation: a change is written right after it", status == 201, (status, body))
        delivered = k.updated("after-revocation", 10)
        check("revocation: another token's stream of the tenant delivers the change", delivered is not None,
              len(k.messages))
        check("revocation: the revoked token's stream ends (well before --token-recheck 60)", r.ended.wait(10))
        leaked = [m for m in r.messages if m[2].get("type") == "todo.updated"]
        check("revocation: the revoked token's stream delivered nothing committed after the revocation",
              leaked == [], leaked[:1])
        check("revocation: the other token's stream stays open", not k.ended.is_set())
        check("revocation: the revoked token's next request is 401",
              srv.request("GET", "/v1/todos", tok=revoked)[0] == 401)

        # mid catch-up: the client has read nothing of 300 conversations when its token is
        # revoked and a conversation written
        cid, catching = token("initech", "catching-up")
        sock, first = raw_stream(srv.port, catching, "1:1:", rcvbuf=4096)
        check("revocation: a catch-up from Last-Event-ID 1:1: opens", first.startswith(b"HTTP/1.1 200"), first[:40])
        time.sleep(0.5)
        with admin() as c:
            c.execute("SELECT todo.revoke_token(%s)", (cid,))
        with psycopg.connect(dbname=DB, user="agent_login") as c:
            c.execute("SELECT todo.set_context('initech', 'zzz-after-revocation', 'writer')")
            c.execute("INSERT INTO todo.todos (subject) VALUES ('written after the revocation')")
            c.commit()
        messages, ended = read_to_end(sock, first, 30)
        sock.close()
        sessions = {d["properties"]["sessionID"] for _, d in messages if d.get("type") == "todo.updated"}
        check("revocation: the catch-up stream ends", ended, len(messages))
        check("revocation: it never delivers the conversation written after the revocation",
              "zzz-after-revocation" not in sessions, len(sessions))
    finally:
        for s in (r, k):
            if s is not None:
                s.close()
        srv.stop()


# The service's peak RSS (MB) with 8 readers stalled on the catch-up of a 7 MB list: the 4
# that hold a page hold about one list each (and each of their pooled connections keeps a read
# buffer as large as the largest answer it read), the others nothing; 21 MB before. Before the
# bound, each reader held 2 to 3 times the list: 165 MB.
CATCH_UP_BOUND_MB = 96


def test_catch_up_memory(cluster, serve):
    """3. Readers stalled on a large catch-up hold at most --tenant-catch-ups pages."""
    cluster.database(DB, tenants=["acme", "globex", "huge"])
    # a list read is bounded by the extension (todo.max_read_todos, 1,000 todos, and
    # todo.max_output_size, 1 MiB, since 0.9.1): an administrator may raise them, and the
    # service must hold its bound then too
    with admin() as c:
        c.execute(f"ALTER DATABASE {DB} SET todo.max_read_todos = 20000")
        c.execute(f"ALTER DATABASE {DB} SET todo.max_output_size = '64MB'")
    # one list of about 7 MB of JSON: more than the kernel's socket buffers take from a
    # stalled reader (4 MB at most here), so a page sent to one stays in the process
    fill("huge", 1, 10000, subject_words=60)
    fill("globex", 3, 5)
    tokens = [token("huge", f"reader-{i}")[1] for i in range(2)]
    _, other = token("globex", "globex-reader")
    srv = serve(DB, "--tenant-wait", "1")
    socks = []
    try:
        before = srv.status("VmHWM") / 1024
        answers = []
        for i in range(8):
            s, first = raw_stream(srv.port, tokens[i % 2], "1:1:", rcvbuf=4096)
            socks.append(s)
            answers.append(first)
        time.sleep(2)
        hwm = srv.status("VmHWM") / 1024
        print(f"measured: 8 readers stalled on the catch-up of a 10,000-todo list (7 MB): VmHWM {before:.0f} MB before, "
              f"{hwm:.0f} MB after")
        ok = [a for a in answers if a.startswith(b"HTTP/1.1 200")]
        busy = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
        check("catch-up: 4 readers (--tenant-catch-ups) get their catch-up; the 4 others are refused with 503",
              (len(ok), len(busy)) == (4, 4), [a[:12] for a in answers])
        check("catch-up: the refusals have Retry-After and a JSON error naming --tenant-catch-ups",
              busy != [] and all(b"retry-after: 1" in a.lower() and b"--tenant-catch-ups" in a for a in busy), busy[:1])
        check(f"catch-up: the service's peak RSS stays under {CATCH_UP_BOUND_MB} MB", hwm < CATCH_UP_BOUND_MB,
              f"{hwm:.0f} MB")
        o, first = raw_stream(srv.port, other, "1:1:")
        messages, _ = read_to_end(o, first, 3)
        o.close()
        check("catch-up: meanwhile another tenant catches up (200, its 3 lists)",
              first.startswith(b"HTTP/1.1 200")
              and len([d for _, d in messages if d.get("type") == "todo.updated"]) == 3, (first[:12], len(messages)))
    finally:
        for s in socks:
            s.close()
    # the stalled readers gone, their places are free: a reader that reads gets it all
    got = None
    for _ in range(50):
        s, first = raw_stream(srv.port, tokens[0], "1:1:")
        if first.startswith(b"HTTP/1.1 200"):
            got = read_to_end(s, first, 5)
            s.close()
            break
        s.close()
        time.sleep(0.1)
    lists = [(i, d) for i, d in (got[0] if got else []) if d.get("type") == "todo.updated"]
    check("catch-up: once the stalled readers are gone, a reader gets the whole list of 10,000 todos and the id",
          len(lists) == 1 and len(lists[0][1]["properties"]["todos"]) == 10000 and lists[0][0] is not None,
          [(i, len(d["properties"]["todos"])) for i, d in lists])
    srv.stop()


MCP = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
       "MCP-Protocol-Version": "2025-06-18"}
INTERNAL_WORDS = ("22021", "22P05", "invalid byte sequence", "Unicode escape", "fail to deserialize",
                  "permission denied", ".rs:")


def rpc(id, method, params):
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()


def test_mcp_bad_input(cluster, serve):
    """4. /mcp answers bad input with 400 and a JSON-RPC error, never the database's words."""
    cluster.database(DB, tenants=["acme", "globex"])
    _, tok = token("acme", "mcp-client")
    srv = serve(DB)
    seen = []

    def post(raw, path="/mcp", headers=MCP):
        status, h, body, payload = srv.request("POST", path, tok=tok, headers=headers, raw=raw)
        seen.append(payload)
        return status, h.get("content-type"), body

    def parse_error(answer):
        status, ctype, body = answer
        return (status == 400 and ctype == "application/json" and isinstance(body, dict)
                and body.get("jsonrpc") == "2.0" and body.get("id") is None and body["error"]["code"] == -32700)
    try:
        for name, raw, headers in [("not JSON", b"hello", MCP),
                                   ("not JSON, as text/plain", b"hello", {**MCP, "Content-Type": "text/plain"}),
                                   ("invalid JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', MCP),
                                   ("not UTF-8", b"\xff\xfe{}", MCP),
                                   ("empty", b"", MCP)]:
            answer = post(raw, headers=headers)
            check(f"mcp: a body {name} is 400 with a JSON-RPC parse error (-32700)", parse_error(answer), answer)
        status, ctype, body = post(b'{"a": 1}')
        check("mcp: JSON that is no JSON-RPC message is 400 with a JSON-RPC error -32600",
              status == 400 and body["error"]["code"] == -32600, (status, body))
        status, ctype, body = post(rpc(7, "tools/list", {}), headers={**MCP, "Content-Type": "text/plain"})
        check("mcp: a JSON-RPC message sent as text/plain is 415 with a JSON-RPC error naming the Content-Type",
              status == 415 and ctype == "application/json" and "Content-Type" in body["error"]["message"],
              (status, body))
        status, ctype, body = post(rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                         "clientInfo": {"name": "t", "version": "1"}}))
        check("mcp: a good request is still answered", status == 200 and "result" in body, (status, body))

        nul = "\u0000"
        for where, raw in [("a tool's name", rpc(2, "tools/call", {"name": f"todo{nul}write", "arguments": {}})),
                           ("a tool's arguments", rpc(3, "tools/call", {"name": "todowrite", "arguments": {"todos": [
                               {"content": f"a{nul}b", "status": "pending", "priority": "low", "id": "1"}]}}))]:
            status, ctype, body = post(raw, path="/mcp?list=nul-test")
            message = body["error"]["message"] if isinstance(body, dict) and "error" in body else ""
            check(f"mcp: U+0000 in {where} is 400 with a JSON-RPC error saying to remove it",
                  status == 400 and body.get("id") in (2, 3) and "\\u0000" in message and "remove it" in message,
                  (status, body))
        status, ctype, body = post(rpc(4, "tools/list", {}), path="/mcp?list=a%00b")
        check("mcp: U+0000 in ?list= is 400 saying to remove it",
              status == 400 and "list" in body["error"] and "remove it" in body["error"], (status, body))
        status, _, body, payload = srv.request("GET", "/session/a%00b/todo", tok=tok)
        seen.append(payload)
        check("a session id holding U+0000 is 400 saying to remove it, not 500",
              status == 400 and "remove it" in body["error"], (status, body))

        # a refusal that is not the caller's: the database's words stay in the log
        with admin() as c:
            c.execute("REVOKE EXECUTE ON FUNCTION todo.call_mcp(text, jsonb) FROM agent_login")
        try:
            status, ctype, body = post(rpc(5, "tools/call", {"name": "todowrite", "arguments": {"todos": []}}),
                                       path="/mcp?list=x")
        finally:
            with admin() as c:
                c.execute("GRANT EXECUTE ON FUNCTION todo.call_mcp(text, jsonb) TO agent_login")
        text = json.dumps(body)
        check("mcp: a tool call the database refuses for the service's own reasons says internal error, not its words",
              status == 200 and body["result"]["isError"] and "internal error" in text, (status, body))
        check("mcp: the database's words are in the service's log", srv.wait_log("42501", 5), srv.logtext()[-300:])
        leaked = [p[:200] for p in seen if any(w.encode() in p for w in INTERNAL_WORDS)]
        check("mcp: no answer holds an internal text (SQLSTATE 22021/22P05, the SDK's words, a privilege, a file)",
              leaked == [], leaked)
    finally:
        srv.stop()


def from_address(address, port, method, path, tok=None, conn=None):
    """(status, headers, parsed body) of one request from the local `address` (127.0.0.2 …,
    all loopback), on `conn` when given (keep-alive) or a new connection."""
    c = conn or http.client.HTTPConnection(HOST, port, timeout=30, source_address=(address, 0))
    c.request(method, path, headers={"Authorization": f"Bearer {tok}"} if tok else {})
    r = c.getresponse()
    payload = r.read()
    if conn is None:
        c.close()
    try:
        body = json.loads(payload) if payload else None
    except ValueError:
        body = payload
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def authenticate_calls():
    """How many times todo.authenticate has run in the database (track_functions = all)."""
    with admin() as c:
        row = c.execute("SELECT calls FROM pg_stat_user_functions WHERE schemaname = 'todo' "
                        "AND funcname = 'authenticate'").fetchone()
    return row[0] if row else 0


# connections of the flooding address in the measurement: more than the pool's 16, so that
# before the limit its token lookups could hold every pooled connection
FLOODERS = 32


def percentiles(values):
    v = sorted(values)
    pick = lambda p: v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]  # noqa: E731
    return pick(50), pick(99), v[-1]


def test_failed_authentications_per_address(cluster, serve):
    """5. A client that fails to authenticate is refused without asking the database."""
    cluster.database(DB, tenants=["acme", "globex"])
    with admin() as c:
        c.execute(f"ALTER DATABASE {DB} SET track_functions = 'all'")
    _, mine = token("acme", "flooder-own")
    _, theirs = token("globex", "other-client")
    before = authenticate_calls()
    srv = serve(DB, PG_TODOS_AUTH_FAIL_BURST="5", PG_TODOS_AUTH_FAIL_RATE="0.01")
    bad, good = [], []
    for i in range(20):
        bad.append(from_address("127.0.0.2", srv.port, "GET", "/v1/todos", tok="pgt_" + secrets.token_hex(32)))
        if i % 4 == 3:
            good.append(from_address("127.0.0.3", srv.port, "GET", "/v1/todos", tok=theirs)[0])
    statuses = [b[0] for b in bad]
    check("auth failures: 20 bad tokens from one address: 401 for the burst (5), then 429 for the 15 others",
          statuses == [401] * 5 + [429] * 15, statuses)
    refused = [b for b in bad if b[0] == 429]
    check("auth failures: each 429 has Retry-After (the seconds until one more try) and a JSON error naming the settings",
          refused != [] and all(b[1].get("retry-after") == "100" and isinstance(b[2], dict)
                                and "--auth-fail-rate" in b[2]["error"] and "--auth-fail-burst" in b[2]["error"]
                                for b in refused), refused[:1])
    status, _, body = from_address("127.0.0.2", srv.port, "GET", "/v1/todos", tok=mine)
    check("auth failures: once its bucket is empty, the address is refused even with a valid token never seen to authenticate (429)",
          status == 429, (status, body))
    check("auth failures: meanwhile another client (another tenant's token) gets 200 every time",
          good == [200] * 5, good)
    srv.stop()
    # the service's backends have exited: their statistics are in
    for _ in range(100):
        with admin() as c:
            left = c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_todos_serve'").fetchone()[0]
        if left == 0:
            break
        time.sleep(0.1)
    asked = authenticate_calls() - before
    check("auth failures: the database was asked about a token only for the 5 refused with 401 and the 5 good requests",
          asked == 10, asked)

    # the measurement: the other client's latency without and during a flood, with the defaults
    srv = serve(DB)
    conn = http.client.HTTPConnection(HOST, srv.port, timeout=30, source_address=("127.0.0.3", 0))
    for _ in range(20):  # warm the pool
        from_address("127.0.0.3", srv.port, "GET", "/v1/todos", tok=theirs, conn=conn)

    def timed(n):
        took = []
        for _ in range(n):
            start = time.monotonic()
            status = from_address("127.0.0.3", srv.port, "GET", "/v1/todos", tok=theirs, conn=conn)[0]
            took.append((time.monotonic() - start) * 1000)
            assert status in (200, 503), status
        return took
    quiet = timed(300)
    stop = threading.Event()
    counts = {}
    lock = threading.Lock()

    def flood():
        c = http.client.HTTPConnection(HOST, srv.port, timeout=30, source_address=("127.0.0.2", 0))
        while not stop.is_set():
            try:
                status = from_address("127.0.0.2", srv.port, "GET", "/v1/todos", tok="pgt_" + secrets.token_hex(32),
                                      conn=c)[0]
            except (OSError, http.client.HTTPException):
                c.close()
                c = http.client.HTTPConnection(HOST, srv.port, timeout=30, source_address=("127.0.0.2", 0))
                continue
            with lock:
                counts[status] = counts.get(status, 0) + 1
        c.close()
    threads = [threading.Thread(target=flood) for _ in range(FLOODERS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(0.5)
    loud = timed(300)
    stop.set()
    for t in threads:
        t.join(30)
    seconds = time.monotonic() - start
    conn.close()
    q, l = percentiles(quiet), percentiles(loud)
    total = sum(counts.values())
    print(f"measured: another tenant's GET /v1/todos from another address, 300 in a row: p50 {q[0]:.1f} ms, "
          f"p99 {q[1]:.1f} ms, max {q[2]:.1f} ms without a flood; p50 {l[0]:.1f} ms, p99 {l[1]:.1f} ms, "
          f"max {l[2]:.1f} ms while {FLOODERS} connections of one address sent {total / seconds:.0f} bad tokens/s "
          f"({counts.get(401, 0)} answered 401 after asking the database, {counts.get(429, 0)} 429 without)")
    srv.stop()
