#!/usr/bin/env python3
"""metrics: what an operator watches of `pg_todos serve`, over real HTTP, as the plain role
agent_login:
  1. `--metrics-listen`: GET /metrics on an address of its own, with no token, answers
     Prometheus's text format (every line parses: `# HELP`, `# TYPE`, samples with escaped
     labels) and declares every family; any other path there is 404, and the service's own
     address has no /metrics;
  2. requests are counted by method, route template and status (200s, a 404 of no route, a 405,
     401s without and with a bogus token, which are also the token refusals); an id or a
     hostile string in a path never becomes a label; the latency histogram's buckets rise to its
     count;
  3. an open event stream is a live one and its tenant a hub, until it closes; the pool's
     connections and size (--pool-size) and the feed's lag are read as they are;
  4. a database error (the role loses EXECUTE on a function) is counted by its SQLSTATE class;
  5. docs/grafana/pg_todos.json: every metric its PromQL names is one /metrics declares, and
     its todo.stats() table's SQL runs;
  6. `--log-format json`: every line of the log is one JSON object with timestamp, level,
     target, message and fields, a request's with its method, path, route, status and ms;
     the text log's request line has the same fields as key=value, and neither holds a token.
"""
import json
import math
import os
import re
import time

import psycopg

import web
from checks import check
from pg import REPO, free_port

DB = "metrics"
DASHBOARD = os.path.join(REPO, "docs", "grafana", "pg_todos.json")

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)')


def parse(text):
    """({family: type}, [(name, {label: value}, value)]) of a text exposition; raises
    ValueError on a line that is not one of the format's."""
    families, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            if len(line.split(" ", 3)) < 4:
                raise ValueError(f"HELP without text: {line!r}")
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            if kind not in ("counter", "gauge", "histogram", "summary", "untyped"):
                raise ValueError(f"unknown type: {line!r}")
            families[name] = kind
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError(f"not a sample: {line!r}")
        name, inner, value = m.groups()
        labels = {}
        if inner:
            pos = 0
            for lm in LABEL.finditer(inner):
                if lm.start() != pos:
                    raise ValueError(f"bad labels: {line!r}")
                labels[lm.group(1)] = re.sub(r'\\(.)', lambda e: "\n" if e.group(1) == "n" else e.group(1),
                                             lm.group(2))
                pos = lm.end()
            if pos != len(inner):
                raise ValueError(f"bad labels: {line!r}")
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if name not in families and base not in families:
            raise ValueError(f"a sample of no declared family: {line!r}")
        samples.append((name, labels, float(value)))
    return families, samples


def value(samples, name, **labels):
    """The value of the sample `name` whose labels include `labels`; 0 when there is none
    (a counter not yet moved)."""
    found = [v for n, l, v in samples if n == name and all(l.get(k) == x for k, x in labels.items())]
    return sum(found)


class Service:
    """A `pg_todos serve` with --metrics-listen on a free port of its own."""

    def __init__(self, cli, *flags):
        self.metrics_port = free_port()
        self.server = web.Server(cli, DB, "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *flags)

    def scrape(self):
        status, headers, _, raw = web.request("GET", "/metrics", port=self.metrics_port)
        assert status == 200, (status, raw[:300])
        return headers, raw.decode()

    def stop(self):
        self.server.stop()


def admin():
    return psycopg.connect(dbname=DB, user=os.environ.get("PGUSER", "postgres"), autocommit=True)


def test_metrics(cluster, cli):
    cluster.database(DB, tenants=["acme", "globex"])
    _, acme = web.token(DB, "acme", "ci-bot")
    svc = Service(cli, "--pool-size", "3")
    try:
        run(svc, acme)
    finally:
        svc.stop()
    check("the text log: a request's line with its fields as key=value",
          re.search(r"INFO request method=GET path=/v1/todos route=/v1/todos status=200 ms=\d+",
                    svc.server.logtext()) is not None, svc.server.logtext()[-600:])
    check("the text log holds no token", acme not in svc.server.logtext())


def run(svc, acme):
    headers, text = svc.scrape()
    check("/metrics: the text format's content type", headers.get("content-type") == "text/plain; version=0.0.4; charset=utf-8",
          headers.get("content-type"))
    try:
        families, samples = parse(text)
        parsed = True
    except ValueError as e:
        families, samples, parsed = {}, [], False
        check("/metrics: every line parses", False, str(e))
    check("/metrics: every line parses", parsed)
    want = {"pg_todos_build_info": "gauge", "pg_todos_http_requests_total": "counter",
            "pg_todos_http_request_duration_seconds": "histogram", "pg_todos_http_token_refusals_total": "counter",
            "pg_todos_db_errors_total": "counter", "pg_todos_db_pool_connections": "gauge",
            "pg_todos_db_pool_max_connections": "gauge", "pg_todos_db_pool_waiting": "gauge",
            "pg_todos_event_streams": "gauge", "pg_todos_event_streams_max": "gauge", "pg_todos_event_hubs": "gauge",
            "pg_todos_feed_lag_seconds": "gauge", "pg_todos_feed_failures_total": "counter"}
    check("/metrics: every family declared with its type", families == want, families)
    check("/metrics: no token needed, the version as a label",
          any(n == "pg_todos_build_info" and l.get("version") for n, l, _ in samples), samples[:3])
    check("/metrics: the pool's size is --pool-size", value(samples, "pg_todos_db_pool_max_connections") == 3)
    refusals0 = value(samples, "pg_todos_http_token_refusals_total")

    # the two listeners keep to their own paths
    status, _, body, _ = web.request("GET", "/v1/todos", port=svc.metrics_port)
    check("metrics listener: another path is 404", status == 404, (status, body))
    status, _, _, _ = svc.server.request("GET", "/metrics")
    check("service listener: no /metrics there", status == 404, status)

    # requests of every kind
    ok = svc.server.request("GET", "/v1/todos", tok=acme)[0]
    ok2 = svc.server.request("GET", "/v1/todos", tok=acme)[0]
    added = svc.server.request("POST", "/v1/todos", {"subject": "counted"}, tok=acme)
    todo_id = added[2]["todo"]["id"] if added[0] == 201 else 0
    one = svc.server.request("GET", f"/v1/todos/{todo_id}", tok=acme)[0]
    hostile = svc.server.request("GET", '/v1/todos/%22%7D%20injected%7B', tok=acme)[0]
    no_route = svc.server.request("GET", "/no/such/route/12345")[0]
    wrong_method = svc.server.request("DELETE", "/v1/board", tok=acme)[0]
    no_token = svc.server.request("GET", "/v1/todos")[0]
    bogus = svc.server.request("GET", "/v1/todos", tok="pgt_" + "0" * 64)[0]
    check("requests answered as expected", (ok, ok2, added[0], one, no_route, wrong_method, no_token, bogus)
          == (200, 200, 201, 200, 404, 405, 401, 401), (ok, ok2, added[0], one, no_route, wrong_method, no_token, bogus))

    # an event stream, live until it closes
    stream = web.Sse(acme, port=svc.server.port)
    connected = stream.wait(lambda d: d.get("type") == "server.connected", 10)
    check("events: the stream opened", stream.status == 200 and connected is not None, stream.status)
    _, text = svc.scrape()
    _, samples = parse(text)
    check("events: one live stream, its tenant a hub",
          (value(samples, "pg_todos_event_streams", kind="live"), value(samples, "pg_todos_event_hubs"),
           value(samples, "pg_todos_event_streams", kind="catching_up")) == (1, 1, 0),
          [s for s in samples if s[0].startswith("pg_todos_event")])
    check("events: --max-streams", value(samples, "pg_todos_event_streams_max") == 256)
    lag = [v for n, _, v in samples if n == "pg_todos_feed_lag_seconds"]
    check("feed: its lag is a number of seconds, small while it keeps up",
          len(lag) == 1 and 0 <= lag[0] < 60 and math.isfinite(lag[0]), lag)
    stream.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        _, samples = parse(svc.scrape()[1])
        if value(samples, "pg_todos_event_streams", kind="live") == 0 and value(samples, "pg_todos_event_hubs") == 0:
            break
        time.sleep(0.1)
    check("events: closed, no stream and no hub left",
          (value(samples, "pg_todos_event_streams", kind="live"), value(samples, "pg_todos_event_hubs")) == (0, 0))

    # what was counted
    _, text = svc.scrape()
    _, samples = parse(text)
    req = "pg_todos_http_requests_total"
    got = {
        "GET /v1/todos 200": value(samples, req, method="GET", route="/v1/todos", status="200"),
        "POST /v1/todos 201": value(samples, req, method="POST", route="/v1/todos", status="201"),
        "GET /v1/todos 401": value(samples, req, method="GET", route="/v1/todos", status="401"),
        "GET unmatched 404": value(samples, req, method="GET", route="unmatched", status="404"),
        "DELETE /v1/board 405": value(samples, req, method="DELETE", route="/v1/board", status="405"),
        "GET /v1/events 200": value(samples, req, method="GET", route="/v1/events", status="200"),
    }
    # the two 404s of no route: /no/such/route/12345, and /metrics asked of the service
    check("requests: counted by method, route template and status", got == {
        "GET /v1/todos 200": 2, "POST /v1/todos 201": 1, "GET /v1/todos 401": 2, "GET unmatched 404": 2,
        "DELETE /v1/board 405": 1, "GET /v1/events 200": 1}, got)
    by_id = value(samples, req, method="GET", route="/v1/todos/{*rest}")
    check("requests: a todo's path is counted under its template", by_id == 2, (one, hostile, by_id))
    routes = {l.get("route") for n, l, _ in samples if "route" in l}
    check("requests: no path becomes a label", not any(r for r in routes if "12345" in r or "injected" in r
                                                       or re.search(r"/v1/todos/\d", r)), routes)
    check("requests: the 401s are token refusals",
          value(samples, "pg_todos_http_token_refusals_total") - refusals0 == 2,
          value(samples, "pg_todos_http_token_refusals_total"))
    h = "pg_todos_http_request_duration_seconds"
    buckets = sorted(((float(l["le"]), v) for n, l, v in samples
                      if n == h + "_bucket" and l.get("route") == "/v1/todos" and l.get("method") == "GET"))
    count = value(samples, h + "_count", method="GET", route="/v1/todos")
    check("latency: buckets rise to +Inf, which is the count",
          len(buckets) > 1 and all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
          and buckets[-1] == (math.inf, count) and count == 4, (buckets, count))
    check("latency: a sum in seconds", 0 < value(samples, h + "_sum", method="GET", route="/v1/todos") < 60)
    pool = (value(samples, "pg_todos_db_pool_connections", state="in_use"),
            value(samples, "pg_todos_db_pool_connections", state="idle"))
    check("pool: the connections opened, none held at rest", 1 <= sum(pool) <= 3 and pool[0] == 0, pool)

    # a database error, by its class: the role may no longer run the function a route calls
    errors0 = value(samples, "pg_todos_db_errors_total", **{"class": "42"})
    with admin() as c:
        c.execute("REVOKE EXECUTE ON FUNCTION todo.list_as(text, text) FROM agent_login")
    try:
        failed = svc.server.request("GET", "/session/s1/todo", tok=acme)[0]
    finally:
        with admin() as c:
            c.execute("GRANT EXECUTE ON FUNCTION todo.list_as(text, text) TO agent_login")
    _, samples = parse(svc.scrape()[1])
    check("database errors: a 42501 counted in class 42",
          failed == 500 and value(samples, "pg_todos_db_errors_total", **{"class": "42"}) - errors0 == 1,
          (failed, [s for s in samples if s[0] == "pg_todos_db_errors_total"]))

    # the dashboard names only what the service exports
    families, _ = parse(svc.scrape()[1])
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    exprs, sqls = [], []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "expr" and isinstance(v, str):
                    exprs.append(v)
                elif k == "rawSql" and isinstance(v, str):
                    sqls.append(v)
                elif k == "query" and isinstance(v, dict) and isinstance(v.get("query"), str):
                    exprs.append(v["query"])
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(dashboard)
    names = {n for e in exprs for n in re.findall(r"\bpg_todos_[a-z0-9_]+", e)}
    unknown = {n for n in names if n not in families and re.sub(r"_(bucket|sum|count)$", "", n) not in families}
    check("dashboard: its PromQL names metrics", len(exprs) >= 10 and len(names) >= 10, (len(exprs), names))
    check("dashboard: every metric it names is exported", not unknown, unknown)
    unused = set(families) - {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}
    check("dashboard: every exported family is on it", not unused, unused)
    with admin() as c:
        for sql in sqls:
            rows = c.execute(sql).fetchall()
            check(f"dashboard: {sql} runs", len(rows) == 2, rows)


def test_json_log(cluster, cli):
    cluster.database(DB, tenants=["acme"])
    _, acme = web.token(DB, "acme", "json-bot")
    svc = Service(cli, "--log-format", "json")
    try:
        svc.server.request("GET", "/v1/todos", tok=acme)
        svc.server.request("GET", "/v1/todos")
        svc.scrape()
    finally:
        svc.stop()
    text = svc.server.logtext()
    lines = [l for l in text.splitlines() if l.strip()]
    objects = []
    for line in lines:
        try:
            objects.append(json.loads(line))
        except ValueError:
            check("json log: every line is a JSON object", False, line)
    check("json log: every line is a JSON object", len(objects) == len(lines) and len(lines) >= 4, len(lines))
    keys = {"timestamp", "level", "target", "message", "fields"}
    check("json log: each with timestamp, level, target, message and fields",
          all(isinstance(o, dict) and set(o) == keys and isinstance(o["fields"], dict) for o in objects),
          [o for o in objects if not isinstance(o, dict) or set(o) != keys][:2])
    check("json log: RFC 3339 timestamps in UTC",
          all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", o["timestamp"]) for o in objects),
          [o["timestamp"] for o in objects][:3])
    requests = [o for o in objects if o["message"] == "request"]
    ok = [o["fields"] for o in requests if o["fields"].get("status") == 200]
    check("json log: a request's fields", any(
        f.get("method") == "GET" and f.get("path") == "/v1/todos" and f.get("route") == "/v1/todos"
        and isinstance(f.get("ms"), int) for f in ok), requests)
    check("json log: the 401 too", any(o["fields"].get("status") == 401 for o in requests), requests)
    check("json log: the start and the metrics' address said",
          any("metrics at http://127.0.0.1:" in o["message"] for o in objects)
          and any(o["message"].startswith("listening on") for o in objects), [o["message"] for o in objects][:5])
    check("json log: levels and no token", all(o["level"] in ("INFO", "WARN", "ERROR") for o in objects)
          and acme not in text)
