#!/usr/bin/env python3
"""sse_load: the event stream of `pg_todos serve` under load, on loopback. CLIENTS SSE clients
stay connected to /v1/events while one writer POSTs todos at a steady RATE per second for
SECONDS seconds (round-robin over 20 conversations). Proves: no request and no stream fails,
every client sees every written todo (in some todo.updated list), the server's memory stays
bounded (RSS from /proc/<pid>/status, sampled each second: first, last, max). Prints p50/p99
of the time from the write's commit (when the POST returned, client side) to each client's
receipt, as a Markdown table, then the checks' `N passed, N failed`.
Before the writes, SSE_IDLE seconds with every client connected and nothing written: what
following the log costs the database then (statements a second and CPU of the service's
backends, from pg_stat_database and /proc).
Usage: bench/sse_load.py SERVER_BINARY DBNAME TOKEN   (libpq environment of the cluster)
Environment: SSE_CLIENTS (100), SSE_RATE (20), SSE_SECONDS (30), SSE_IDLE (10), SSE_FEED
(log or logical: the service's --feed).
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from checks import check, summary  # noqa: E402
from web import libpq_env  # noqa: E402

SERVER, DB, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
CLIENTS = int(os.environ.get("SSE_CLIENTS", 100))
RATE = float(os.environ.get("SSE_RATE", 20))
SECONDS = float(os.environ.get("SSE_SECONDS", 30))
IDLE = float(os.environ.get("SSE_IDLE", 10))
FEED = os.environ.get("SSE_FEED", "log")
CONVERSATIONS = 20
HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Client:
    """One SSE client: the first time it saw each todo id."""

    def __init__(self, port):
        self.seen = {}
        self.messages = 0
        self.closing = False
        self.error = None
        self.connected = threading.Event()
        self.conn = http.client.HTTPConnection(HOST, port, timeout=120)
        self.conn.request("GET", "/v1/events", headers={"Authorization": f"Bearer {TOKEN}"})
        self.resp = self.conn.getresponse()
        if self.resp.status != 200:
            self.error = f"status {self.resp.status}"
            return
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    if not self.closing:
                        self.error = self.error or "stream ended"
                    return
                if not line.startswith(b"data: "):
                    continue
                now = time.monotonic()
                data = json.loads(line[6:])
                self.messages += 1
                if data["type"] == "server.connected":
                    self.connected.set()
                    continue
                for t in data["properties"]["todos"]:
                    self.seen.setdefault(t["id"], now)
        except Exception as e:  # noqa: BLE001 — closed at the end, or a real failure
            if not self.closing:
                self.error = repr(e)

    def close(self):
        self.closing = True
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    port = free_port()
    # every client streams with one token of one tenant: the per-token and per-tenant stream
    # caps, and the tenant's catch-ups at once, raised to the load's size
    env = libpq_env(DB, PG_TODOS_MAX_STREAMS=str(max(256, CLIENTS)), PG_TODOS_MAX_STREAMS_PER_TOKEN=str(CLIENTS),
                    PG_TODOS_MAX_STREAMS_PER_TENANT=str(CLIENTS), PG_TODOS_TENANT_CATCH_UPS=str(CLIENTS))
    log = open("/tmp/pg_todos-sse-load-server.log", "w")
    server = subprocess.Popen([SERVER, "serve", "--listen", f"{HOST}:{port}", "--feed", FEED], env=env, stdout=log,
                              stderr=log)
    for _ in range(200):
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    rss = [rss_kib(server.pid)]

    clients = [Client(port) for _ in range(CLIENTS)]
    connected = all(c.connected.wait(10) for c in clients if c.error is None)
    check(f"{CLIENTS} clients connected", connected and all(c.error is None for c in clients),
          [c.error for c in clients if c.error][:3])
    rss.append(rss_kib(server.pid))

    # idle: every client connected, nothing written
    def idle_sample():
        out = subprocess.run(["psql", "-X", "-At", "-d", DB, "-c",
                              "SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()),"
                              " (SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE application_name = 'pg_todos_serve')"],
                             capture_output=True, text=True).stdout.strip().split("|")
        cpu = 0
        for pid in (out[1].split() if len(out) > 1 else []):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                cpu += int(fields[11]) + int(fields[12])
            except OSError:
                pass
        return int(out[0]), cpu
    time.sleep(1)
    t0, (x0, c0) = time.monotonic(), idle_sample()
    time.sleep(IDLE)
    t1, (x1, c1) = time.monotonic(), idle_sample()
    idle_xacts = (x1 - x0 - 1) / (t1 - t0)  # the sample's own transaction aside
    idle_cpu = (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0) * 100

    writes = []  # (id, commit time)
    failures = []
    sampler_stop = threading.Event()

    def sample():
        while not sampler_stop.wait(1):
            rss.append(rss_kib(server.pid))
    threading.Thread(target=sample, daemon=True).start()

    writer = http.client.HTTPConnection(HOST, port, timeout=30)
    total = int(RATE * SECONDS)
    start = time.monotonic()
    for i in range(total):
        due = start + i / RATE
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        body = json.dumps({"subject": f"load {i}", "conversation_id": f"load-{i % CONVERSATIONS}"})
        try:
            writer.request("POST", "/v1/todos", body=body,
                           headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
            r = writer.getresponse()
            answer = r.read()
            committed = time.monotonic()
            if r.status != 201:
                failures.append((r.status, answer[:200]))
                continue
            writes.append((str(json.loads(answer)["todo"]["id"]), committed))
        except (OSError, http.client.HTTPException) as e:
            failures.append(repr(e))
            writer = http.client.HTTPConnection(HOST, port, timeout=30)
    elapsed = time.monotonic() - start

    # every client sees every write (allow a little time for the last ones)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(all(w in c.seen for w, _ in writes) for c in clients):
            break
        time.sleep(0.1)
    sampler_stop.set()
    rss.append(rss_kib(server.pid))

    latencies = [(c.seen[w] - t) * 1000 for c in clients for w, t in writes if w in c.seen]
    missing = sum(1 for c in clients for w, _ in writes if w not in c.seen)
    for c in clients:
        c.close()
    server.terminate()
    code = server.wait(15)
    log.close()

    print()
    print(f"### SSE load: {CLIENTS} clients, {len(writes)} writes at {RATE:g}/s over {elapsed:.1f} s (loopback), --feed {FEED}")
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| writes (201) / failed | {len(writes)} / {len(failures)} |")
    print(f"| deliveries (client × todo) | {len(latencies)} of {len(writes) * CLIENTS} |")
    print(f"| commit → event p50 | {percentile(latencies, 50):.1f} ms |")
    print(f"| commit → event p99 | {percentile(latencies, 99):.1f} ms |")
    print(f"| commit → event max | {max(latencies, default=float('nan')):.1f} ms |")
    print(f"| idle ({IDLE:g} s, every client connected): transactions/s of the database, CPU of the service's backends | "
          f"{idle_xacts:.1f} /s, {idle_cpu:.2f}% of a core |")
    print(f"| server RSS first / last / max | {rss[0] / 1024:.1f} / {rss[-1] / 1024:.1f} / {max(rss) / 1024:.1f} MiB |")
    print()
    check("every write answered 201", not failures, failures[:3])
    check("no stream failed", all(c.error is None for c in clients), [c.error for c in clients if c.error][:3])
    check("every client saw every written todo", missing == 0, f"{missing} missing")
    check("the server's RSS at the end is under twice its level with every client connected",
          rss[-1] < 2 * rss[1] + 8 * 1024, (rss[1], rss[-1]))
    check("the server stops cleanly (exit 0)", code == 0, code)
    summary()


if __name__ == "__main__":
    main()
