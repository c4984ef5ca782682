"""What the tests of the HTTP service share: a `pg_todos serve` process (`Server`), one
request (`request`), an event-stream reader (`Sse`), tokens, and the environment and stop of
any pg_todos process (`libpq_env`, `stop`). conftest.py's `serve` fixture starts servers and
stops them after the test."""
import contextlib
import http.client
import json
import os
import re
import resource
import signal
import socket
import subprocess
import tempfile
import threading
import time

import psycopg

from pg import free_port

HOST = "127.0.0.1"
LOGS = tempfile.mkdtemp(prefix="pg_todos_serve_")


def libpq_env(db, user="agent_login", **extra):
    """This run's libpq variables (not its own PG_TODOS_* settings, which would change what
    the service does), PATH, HOME and USER; database `db` as `user`; then `extra`."""
    env = {k: v for k, v in os.environ.items()
           if (k.startswith("PG") and not k.startswith("PG_TODOS_")) or k in ("PATH", "HOME", "USER")}
    env.update(PGDATABASE=db, PGUSER=user)
    env.update(extra)
    return env


def stop(proc, timeout=15):
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds; its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def token(db, tenant, label, person=False, default_list=None):
    """(token_id, token) of a new bearer token, made by the superuser."""
    with psycopg.connect(dbname=db, user="postgres", autocommit=True) as c:
        return c.execute("SELECT token_id, token FROM todo.create_token(%s, %s, %s, %s)",
                         (tenant, label, person, default_list)).fetchone()


@contextlib.contextmanager
def serving(cluster, binary, db, tenants=("acme",)):
    """A fresh database `db` of `cluster` with `tenants`, and a `pg_todos serve` (`binary`) on
    it for the block: the Server. For a module's fixture."""
    cluster.database(db, tenants=list(tenants))
    srv = Server(binary, db)
    try:
        yield srv
    finally:
        srv.stop()


class Server:
    """One `pg_todos serve` process of `binary` on database `db` as agent_login, on a free port
    (or `port`), its stderr in a log file; `flags` are its command-line flags, `env` extra
    environment variables, `files` its file-descriptor limit (soft and hard). Waits until
    /healthz answers."""
    count = 0

    def __init__(self, binary, db, *flags, port=None, user="agent_login", wait=True, files=None, **env):
        Server.count += 1
        self.port = port or free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log_path = os.path.join(LOGS, f"server-{Server.count}.log")
        self.log = open(self.log_path, "w")

        def limit():
            if files:
                resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
        self.proc = subprocess.Popen([binary, "serve", "--listen", f"{HOST}:{self.port}", *flags],
                                     env=libpq_env(db, user, **env), stdout=self.log, stderr=self.log,
                                     preexec_fn=limit)
        if wait:
            self.wait_healthy()

    def wait_healthy(self, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.logtext()}")
            try:
                if request("GET", "/healthz", port=self.port, timeout=5)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start: " + self.logtext())

    def request(self, method, path, body=None, tok=None, **kw):
        return request(method, path, body, tok, port=self.port, **kw)

    def logtext(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_log(self, pattern, timeout):
        """True once the regular expression `pattern` matches the log (within `timeout` s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.logtext()):
                return True
            time.sleep(0.1)
        return False

    def status(self, field):
        """A field of the process's /proc/<pid>/status, in kB (VmRSS, VmHWM)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        code = stop(self.proc)
        self.log.close()
        return code


def request(method, path, body=None, tok=None, headers=None, port=None, raw=None, timeout=30):
    """(status, headers, parsed JSON or text, raw bytes) of one request on a new connection."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    h = dict(headers or {})
    if tok:
        h["Authorization"] = f"Bearer {tok}"
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    payload = r.read()
    conn.close()
    try:
        parsed = json.loads(payload) if payload else None
    except ValueError:
        parsed = payload.decode(errors="replace")
    return r.status, {k.lower(): v for k, v in r.getheaders()}, parsed, payload


class Sse:
    """An SSE client: reads /v1/events in a thread, keeps (receipt time, id, data) per message."""

    def __init__(self, tok, last_event_id=None, port=None):
        self.conn = http.client.HTTPConnection(HOST, port, timeout=60)
        h = {"Authorization": f"Bearer {tok}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            h["Last-Event-ID"] = last_event_id
        self.conn.request("GET", "/v1/events", headers=h)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.content_type = self.resp.getheader("Content-Type")
        self.messages = []
        self.comments = []
        self.ended = threading.Event()
        self.lock = threading.Condition()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.body = self.resp.read()
            self.ended.set()

    def _read(self):
        msg_id, data = None, []
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        with self.lock:
                            self.messages.append((time.monotonic(), msg_id, json.loads("\n".join(data))))
                            self.lock.notify_all()
                    msg_id, data = None, []
                elif line.startswith(":"):
                    self.comments.append((time.monotonic(), line))
                else:
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "id":
                        msg_id = value
                    elif field == "data":
                        data.append(value)
        except Exception:  # the connection closed under the reader (close(), the server gone)
            pass
        self.ended.set()
        with self.lock:
            self.lock.notify_all()

    def wait(self, pred, timeout, start=0):
        """The first message from index `start` on that satisfies pred, or None after timeout."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for m in self.messages[start:]:
                    if pred(m[2]):
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    return None
                self.lock.wait(left)

    def updated(self, session, timeout, start=0, where=lambda todos: True):
        return self.wait(lambda d: d.get("type") == "todo.updated" and d["properties"]["sessionID"] == session
                         and where(d["properties"]["todos"]), timeout, start)

    def last_id(self):
        with self.lock:
            ids = [m[1] for m in self.messages if m[1] is not None]
        return ids[-1] if ids else None

    def close(self):
        """Closes the connection (again: nothing)."""
        if self.conn.sock is not None:
            try:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.conn.close()
