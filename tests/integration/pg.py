"""PostgreSQL for the integration tests: a throwaway cluster (`Cluster`) that listens on a
Unix socket of its own (TCP only when a test needs it, on a free port), run as `postgres`
when the tests run as root, and databases in it with the extension, the plain role
agent_login and tenants (`Cluster.database`).

Which PostgreSQL: $PG_BINDIR (bin/lib/pg.sh exports it; bin/test-integration sources that),
else `pg_config --bindir`."""
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINDIR = os.environ.get("PG_BINDIR") or subprocess.run(
    ["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
AS_ROOT = os.getuid() == 0
# every cluster of this run under one directory the postgres user can reach, named after the
# checkout and this process (two runs at once never meet: no ports, separate sockets)
BASE = os.environ.get("PGTODOS_TEST_ROOT") or os.path.join(
    "/var/tmp", "pg_todos-tests-" + hashlib.md5(REPO.encode()).hexdigest()[:8])
ROOT = os.path.join(BASE, str(os.getpid()))


def remove_stale_runs():
    """Deletes the clusters of earlier runs whose process is gone (killed, say)."""
    for name in os.listdir(BASE) if os.path.isdir(BASE) else []:
        if name.isdigit() and not os.path.exists(f"/proc/{name}"):
            for cluster in os.listdir(os.path.join(BASE, name)):
                data = os.path.join(BASE, name, cluster, "data")
                if os.path.isdir(data):
                    subprocess.run(as_postgres([f"{BINDIR}/pg_ctl", "-D", data, "-m", "immediate", "stop"]),
                                   capture_output=True)
            shutil.rmtree(os.path.join(BASE, name), ignore_errors=True)


def version():
    """pg_todos' version ([workspace.package] of Cargo.toml, through bin/version)."""
    return subprocess.run([os.path.join(REPO, "bin", "version")], capture_output=True, text=True,
                          check=True).stdout.strip()


def released():
    """The released versions (a frozen sql/pg_todos--X.Y.Z.sql each), oldest first."""
    found = [f[len("pg_todos--"):-len(".sql")] for f in os.listdir(os.path.join(REPO, "sql"))
             if f.startswith("pg_todos--") and f.endswith(".sql") and "--" not in f[len("pg_todos--"):]]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def regress_results(output):
    """(test, passed) of each test pg_regress or pg_isolation_regress printed: `test name ...
    ok` (PostgreSQL 15), `ok 1 - name` / `not ok 1 - name` (16 and later)."""
    results = []
    for line in output.splitlines():
        m = re.match(r"^(?:test\s+)?(\S+)\s+\.\.\.\s+(ok|FAILED|failed)\b", line.strip())
        if m:
            results.append((m[1], m[2] == "ok"))
            continue
        m = re.match(r"^(not ok|ok)\s+\d+\s+[-+]\s+(\S+)", line.strip())
        if m:
            results.append((m[2], m[1] == "ok"))
    return results


def as_postgres(argv):
    """argv run as the postgres OS user when we are root (initdb and postgres refuse root)."""
    return ["runuser", "-u", "postgres", "--", *argv] if AS_ROOT else argv


def free_port():
    """A TCP port nobody listens on now (for a service or a cluster that needs TCP)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n, low=20000, high=32000):
    """The first of `n` consecutive TCP ports nobody listens on now, below Linux's ephemeral
    range (so no client connection takes one meanwhile): for Citus's nodes."""
    import random
    for _ in range(200):
        base = random.randrange(low, high - n)
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports in {low}-{high}")


def own(path):
    """Gives `path` to the postgres OS user (when we are root)."""
    if AS_ROOT:
        shutil.chown(path, "postgres", "postgres")


class Cluster:
    """A fresh cluster NAME under ROOT (an earlier one of that name is destroyed). `tcp=True`
    also listens on 127.0.0.1 at a free port; `conf` lines are appended to postgresql.conf."""

    def __init__(self, name, conf=(), tcp=False):
        self.name = name
        self.dir = os.path.join(ROOT, name)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        self.log_path = os.path.join(self.dir, "postgres.log")
        self.port = free_port() if tcp else 5432
        self.tcp = tcp
        self.destroy()
        os.makedirs(ROOT, exist_ok=True)
        own(BASE)
        own(ROOT)
        os.makedirs(self.sock)
        own(self.dir)
        own(self.sock)
        out = subprocess.run(as_postgres([f"{BINDIR}/initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                                          "-E", "UTF8", "--locale=C.UTF-8", "-N"]),
                             capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"initdb failed: {out.stdout}{out.stderr}")
        self.append_conf("# pg_todos test cluster",
                         f"port = {self.port}",
                         "listen_addresses = '127.0.0.1'" if tcp else "listen_addresses = ''",
                         f"unix_socket_directories = '{self.sock}'",
                         "fsync = off", "max_connections = 100", "log_min_messages = warning",
                         # as docs/operations.md asks: the LOCK guard in every backend
                         "shared_preload_libraries = 'pg_todos'", *conf)
        self.start()

    def append_conf(self, *lines, file="postgresql.conf"):
        with open(os.path.join(self.data, file), "a") as f:
            f.write("".join(line + "\n" for line in lines))

    def write_file(self, name, text, mode=0o600):
        """Writes a file into the data directory, owned by postgres (certificates, pg_hba.conf)."""
        path = os.path.join(self.data, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        own(path)
        return path

    def pg_ctl(self, *args, check=True):
        return subprocess.run(as_postgres([f"{BINDIR}/pg_ctl", "-D", self.data, *args]),
                              capture_output=True, text=True, check=check)

    def running(self):
        return os.path.isdir(self.data) and self.pg_ctl("status", check=False).returncode == 0

    def start(self):
        if not self.running():
            r = self.pg_ctl("-l", self.log_path, "-w", "-t", "60", "start", check=False)
            if r.returncode:
                raise RuntimeError(f"cluster {self.name} did not start: {self.log()[-2000:]}")

    def stop(self, mode="fast"):
        if self.running():
            self.pg_ctl("-m", mode, "-w", "stop")

    def restart(self):
        self.stop()
        self.start()

    def postmaster_pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def kill(self):
        """SIGKILL of the postmaster; returns once its children are gone too."""
        os.kill(self.postmaster_pid(), signal.SIGKILL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if subprocess.run(["pgrep", "-f", self.data], capture_output=True).returncode:
                break
            time.sleep(0.1)
        time.sleep(0.5)

    def destroy(self):
        if os.path.isdir(self.data):
            self.pg_ctl("-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    # clients

    def env(self, db="postgres", user="postgres"):
        """libpq variables for psql, pg_dump, the services: this cluster's socket (or TCP)."""
        return {"PGHOST": self.sock, "PGPORT": str(self.port), "PGDATABASE": db, "PGUSER": user}

    def connect(self, db="postgres", user="postgres", **kw):
        kw.setdefault("autocommit", True)
        return psycopg.connect(host=self.sock, port=self.port, dbname=db, user=user, **kw)

    def psql(self, sql, db="postgres", user="postgres", check=True, args=()):
        """Runs `sql` in psql (-X -A -t, ON_ERROR_STOP); its stdout. Fails with psql's words."""
        env = {**os.environ, **self.env(db, user)}
        r = subprocess.run([f"{BINDIR}/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args],
                           input=sql, capture_output=True, text=True, env=env)
        if check and r.returncode:
            raise RuntimeError(f"psql failed ({r.returncode}): {r.stderr}")
        return r.stdout if check else r

    def database(self, name, tenants=(), extension=True, role="agent_login"):
        """A fresh database NAME: the extension, the plain login role `role` (no superuser, no
        BYPASSRLS) granted what todo.grant_usage gives an app role, and `tenants`. Its name."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.psql(f'CREATE DATABASE "{name}"')
        if extension:
            sql = ["CREATE EXTENSION pg_todos;"]
            if role:
                sql += [f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;",
                        f"SELECT todo.grant_usage('{role}');"]
            sql += [f"INSERT INTO todo.tenants VALUES ('{t}');" for t in tenants]
            self.psql("\n".join(sql), db=name)
        return name


@contextlib.contextmanager
def own_cluster(name, conf=(), tcp=False):
    """A cluster for a whole module (a module-scoped fixture: `with pg.own_cluster(...) as c:
    yield c`): libpq's variables point at it meanwhile; destroyed after."""
    c = Cluster(name, conf=conf, tcp=tcp)
    saved = {k: os.environ.get(k) for k in ("PGHOST", "PGPORT")}
    os.environ.update(PGHOST=c.sock, PGPORT=str(c.port))
    try:
        yield c
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        c.destroy()


def peak_mb(pid):
    """The peak resident memory (VmHWM) of process `pid` so far, in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def backend_peak_mb(conn):
    """The peak resident memory of `conn`'s backend so far, in MB."""
    return peak_mb(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
