"""A chat host for test_mcp_app.py: what a client that renders MCP Apps (SEP-1865) runs.

- `Stdio` and `Http`: the host's MCP connection, raw JSON-RPC (what the server sent, as it
  sent it): a `pg_todos mcp` process (a handshake, then one request at a time, each answered
  by its id) or `/mcp` of `pg_todos serve` with a bearer token (stateless: each request a
  POST). Both declare the extension `io.modelcontextprotocol/ui` in `initialize`, as such a host
  does, and keep the server's answer (`initialized`).
- `Host`: the host's web page, served on 127.0.0.1 by a thread of this process:
  tests/mcp_app/host.html and its script (tests/mcp_app/host.mjs with the official ext-apps
  SDK's AppBridge, bundled by esbuild when the host starts), and `POST /rpc`, which relays the
  page's MCP requests (its own and the app's, as `from`) to the connection and records each
  (`calls`).
"""
import http.server
import json
import os
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request

from pg import REPO
from web import libpq_env, stop

FIXTURE = os.path.join(REPO, "tests", "mcp_app")
ESBUILD = os.path.join(FIXTURE, "node_modules", "@esbuild", "linux-x64", "bin", "esbuild")
PROTOCOL = "2025-11-25"
UI = "io.modelcontextprotocol/ui"
INITIALIZE = {
    "protocolVersion": PROTOCOL,
    "capabilities": {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}},
    "clientInfo": {"name": "mcp-app-host", "version": "1.0"},
}


def installed():
    """Whether tests/mcp_app's packages are there (bin/setup installs them)."""
    return os.path.exists(ESBUILD) and os.path.isdir(os.path.join(FIXTURE, "node_modules", "@modelcontextprotocol",
                                                                  "ext-apps"))


def bundle(out_dir):
    """host.mjs with the SDK, bundled for the browser into out_dir/host.js; its path."""
    out = os.path.join(out_dir, "host.js")
    subprocess.run([ESBUILD, "host.mjs", "--bundle", "--format=esm", "--platform=browser", "--log-level=warning",
                    f"--outfile={out}"], cwd=FIXTURE, check=True, timeout=120)
    return out


class Stdio:
    """`binary mcp ARGS` on database `db` as agent_login, started in `cwd`, with extra
    environment variables `env`: its handshake done."""

    def __init__(self, binary, db, *args, cwd, **env):
        self.proc = subprocess.Popen([binary, "mcp", *args], cwd=cwd, env=libpq_env(db, **env), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lock = threading.Lock()
        self.next_id = 0
        self.initialized = self.request("initialize", INITIALIZE)
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        """The server's answer to one request: its `result` or `error` object, as a dict."""
        with self.lock:
            self.next_id += 1
            self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"pg_todos mcp exited ({self.proc.poll()}) before answering {method}")
                message = json.loads(line)
                if message.get("id") == self.next_id and "method" not in message:
                    return {k: v for k, v in message.items() if k in ("result", "error")}

    def close(self):
        self.proc.stdin.close()
        stop(self.proc)


class Http:
    """`/mcp` at `url` (with its query) with bearer token `tok`: initialize answered."""

    def __init__(self, url, tok):
        self.url = url
        self.tok = tok
        self.next_id = 0
        self.lock = threading.Lock()
        self.initialized = self.request("initialize", INITIALIZE)

    def request(self, method, params):
        with self.lock:
            self.next_id += 1
            body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        headers = {"Authorization": f"Bearer {self.tok}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL}
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                message = json.loads(r.read())
        except urllib.error.HTTPError as e:
            message = json.loads(e.read() or b"{}") or {"error": {"code": e.code, "message": str(e)}}
        return {k: v for k, v in message.items() if k in ("result", "error")}

    def close(self):
        pass


class Host:
    """The host's page on a free port of 127.0.0.1 (`url`), relaying to `connection`."""

    def __init__(self, connection, script):
        self.connection = connection
        self.calls = []  # (from, method, params, the answer)
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status, kind, data):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                files = {"/": (os.path.join(FIXTURE, "host.html"), "text/html; charset=utf-8"),
                         "/host.js": (script, "text/javascript; charset=utf-8")}
                if path not in files:
                    return self._reply(404, "text/plain", b"not found")
                with open(files[path][0], "rb") as f:
                    self._reply(200, files[path][1], f.read())

            def do_POST(self):
                asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                answer = host.connection.request(asked["method"], asked.get("params") or {})
                host.calls.append((asked.get("from"), asked["method"], asked.get("params"), answer))
                self._reply(200, "application/json", json.dumps(answer).encode())

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def app_calls(self, method):
        """The app's requests of `method` so far: (params, answer)."""
        return [(p, a) for who, m, p, a in list(self.calls) if who == "app" and m == method]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.connection.close()


def scratch_dir():
    return tempfile.mkdtemp(prefix="pg_todos_mcp_app_")
