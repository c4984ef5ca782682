#!/usr/bin/env python3
"""serve_limits: what one tenant, one token or one client address may hold of `pg_todos serve`,
over 127.0.0.1 only (docs/http.md, "Limits"):
  1. streams per tenant: with --max-streams 16 (so --max-streams-per-tenant defaults to 2),
     16 tokens of one tenant open 2 event streams and are refused the other 14 (429, a JSON
     error naming --max-streams-per-tenant); another tenant still opens one; the variable
     PG_TODOS_MAX_STREAMS_PER_TENANT sets it.
Every loop is bounded in count and time; no check asserts a speed.
"""
import json
import time

import web
from checks import check
from web import Sse

DB = "serve_limits"
TOKENS = {}


def token(tenant, label, person=False):
    return web.token(DB, tenant, label, person)


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
