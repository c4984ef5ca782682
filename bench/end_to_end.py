#!/usr/bin/env python3
"""end_to_end: one request at a time through each way in, timed at the client, and where the
time goes. For each path, WARMUP requests, then REQUESTS timed ones, sequential:
  - HTTP (`pg_todos serve`, keep-alive): POST /v1/todos (a new todo) and GET /v1/todos;
  - MCP over Streamable HTTP (`/mcp` of the same service) with the official MCP Python SDK's
    client: `todowrite` of a 3-item list and `todoread`;
  - MCP over stdio (`pg_todos mcp`) with the same client: the same two calls.
Where the time goes, per request: the database (pg_stat_statements: every statement the
service's role ran during the timed requests, total execution time / requests), the client
and transport (the same path's floor: GET /healthz, which touches no database, or the MCP
ping, which the server answers without one), and the pg_todos process (the rest: routing,
its pool, JSON, the MCP framing, and its round trips to PostgreSQL: the table counts the statements per
request). Prints a Markdown table.
Usage: bench/end_to_end.py SERVER_BINARY DBNAME TOKEN   (libpq environment of the cluster)
Environment: E2E_REQUESTS (300), E2E_WARMUP (30).
"""
import asyncio
import http.client
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import mcp_session  # noqa: E402
import psycopg  # noqa: E402
import web  # noqa: E402

SERVER, DB, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
REQUESTS = int(os.environ.get("E2E_REQUESTS", 300))
WARMUP = int(os.environ.get("E2E_WARMUP", 30))
ROLE = "agent_login"


def admin():
    return psycopg.connect(dbname=DB, user=os.environ.get("PGUSER", "postgres"), autocommit=True)


def reset_statements():
    with admin() as c:
        c.execute("SELECT pg_stat_statements_reset()")


def database():
    """(execution time in ms, statements) of every statement the service's role ran since the
    last reset."""
    with admin() as c:
        return c.execute(
            "SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0) FROM pg_stat_statements s "
            "JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = %s AND s.query NOT ILIKE '%%pg_stat_statements%%'",
            (ROLE,)).fetchone()


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Result:
    def __init__(self, path, what, times, floor, db):
        self.path, self.what, self.times = path, what, times
        self.median, self.p99 = statistics.median(times), percentile(times, 99)
        self.floor = statistics.median(floor)
        self.db = db[0] / len(times)
        self.statements = db[1] / len(times)

    def row(self):
        server = max(self.median - self.floor - self.db, 0)
        return (f"| {self.path} | {self.what} | {self.median:.2f} | {self.p99:.2f} | {self.floor:.2f} | "
                f"{server:.2f} | {self.db:.2f} | {self.statements:.1f} |")


def timed_sync(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def timed_async(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await f()
        out.append((time.perf_counter() - t) * 1000)
    return out


def http_path(port):
    conn = http.client.HTTPConnection(web.HOST, port, timeout=30)
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    count = [0]

    def call(method, path, body=None, headers=None):
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers or auth)
        r = conn.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {data[:200]!r}")

    def post():
        count[0] += 1
        call("POST", "/v1/todos", {"subject": f"end-to-end {count[0]}", "conversation_id": "e2e-http"})

    def get():
        call("GET", "/v1/todos?conversation_id=e2e-http&limit=20")

    def health():
        call("GET", "/healthz", headers={})

    results = []
    timed_sync(health, WARMUP)
    floor = timed_sync(health, REQUESTS)
    for what, f in (("POST /v1/todos (a new todo)", post), ("GET /v1/todos (20 of the list)", get)):
        timed_sync(f, WARMUP)
        reset_statements()
        times = timed_sync(f, REQUESTS)
        results.append(Result("HTTP (`pg_todos serve`)", what, times, floor, database()))
    conn.close()
    return results


TODOS = {"todos": [{"id": str(i), "content": f"step {i}", "status": s, "priority": "medium"}
                   for i, s in ((1, "completed"), (2, "in_progress"), (3, "pending"))]}


async def mcp_path(name, session):
    results = []
    async with session as s:
        ping = lambda: s.session.send_ping()  # noqa: E731
        await timed_async(ping, WARMUP)
        floor = await timed_async(ping, REQUESTS)

        async def write():
            _, error, text = await s.call("todowrite", TODOS)
            if error:
                raise RuntimeError(text)

        async def read():
            _, error, text = await s.call("todoread", {})
            if error:
                raise RuntimeError(text)

        for what, f in (("`todowrite`, 3 items", write), ("`todoread`", read)):
            await timed_async(f, WARMUP)
            reset_statements()
            times = await timed_async(f, REQUESTS)
            results.append(Result(name, what, times, floor, database()))
    return results


async def main():
    srv = web.Server(SERVER, DB)
    try:
        results = http_path(srv.port)
        url = f"http://{web.HOST}:{srv.port}/mcp?list=e2e-mcp-http&tools=opencode"
        results += await mcp_path("MCP, Streamable HTTP (`/mcp`)", mcp_session.Http(url, TOKEN, client="e2e"))
    finally:
        srv.stop()
    stdio = mcp_session.Stdio(SERVER, DB, "--tenant", "acme", "--conversation", "e2e-mcp-stdio", "--tools", "opencode",
                              cwd="/tmp", client="e2e")
    results += await mcp_path("MCP, stdio (`pg_todos mcp`)", stdio)
    print(f"### End to end: {REQUESTS} sequential requests of each, after {WARMUP} to warm up\n")
    print("| path | request | median ms | p99 ms | client + transport ms | pg_todos process and its round trips ms "
          "| database ms | statements |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(r.row())


if __name__ == "__main__":
    asyncio.run(main())
