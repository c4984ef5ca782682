#!/usr/bin/env python3
"""tls: TLS to PostgreSQL with libpq's meaning, in `pg_todos serve` and `pg_todos mcp`, against
a cluster that accepts TCP connections only over SSL, with a server certificate for
`localhost` signed by the test's authority:
  1. sslmode=verify-full with the test's CA and host localhost: both commands work (the
     service answers /readyz and a request; the MCP server a tool call);
  2. verify-full with another CA: refused (exit 2) saying the certificate did not verify and to
     check sslrootcert;
  3. verify-full to 127.0.0.1 (not in the certificate): refused, saying the host name;
     verify-ca to 127.0.0.1: works (the chain is checked, the name is not);
  4. require without a CA: works (encrypted, not verified);
  5. sslmode=disable: refused by the server (pg_hba.conf: no encryption), its words shown;
  6. PGSSLMODE and PGSSLROOTCERT from the environment, the URL form with ?sslmode=&sslrootcert=;
  7. a client certificate (sslcert, sslkey) for a role the server admits only with one;
  8. verify-full with no root certificate at all: refused before connecting, saying what to set;
     sslrootcert is the only authority trusted (not the system's roots too); over the
     Unix-domain socket no TLS is tried (as libpq);
  9. HTTPS for the service (--tls-cert, --tls-key): a client given the test's CA gets /healthz
     and a request over https://localhost; a client with another CA is refused; plain HTTP to
     the port gets no answer; a TCP connection that never starts the handshake is closed after
     --header-timeout; --tls-cert without --tls-key, or a key not the certificate's: exit 2.
The cluster is the module's own (TCP on a free port, SSL only; pg_hba.conf: hostssl, a
client certificate for cert_agent, no plain TCP); the certificates are made by openssl in a
temporary directory.
"""
import asyncio
import os
import socket
import ssl
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import pg
from checks import check

DB = "tls"
# set by the module's fixture: the command, the cluster's TCP port and socket directory, the
# certificates' directory and its two authorities, a bearer token of tenant acme
BINARY = PORT = SOCKET = CERTS = CA = OTHER = TOKEN = None

HBA = """local     all  all                     trust
hostssl   all  cert_agent  127.0.0.1/32  cert
hostssl   all  all         127.0.0.1/32  trust
hostnossl all  all         127.0.0.1/32  reject
"""


def make_certificates(d):
    """A test CA, a server certificate for localhost it signs, another CA, and a client
    certificate for cert_agent."""
    def ossl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=pg_todos test CA",
         "-keyout", "ca.key", "-out", "ca.crt")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost\n")
    ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
         "-extfile", "server.ext", "-out", "server.crt")
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=another CA",
         "-keyout", "other.key", "-out", "other.crt")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=cert_agent", "-keyout", "client.key", "-out", "client.csr")
    ossl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
         "-out", "client.crt")
    for f in os.listdir(d):
        if f.endswith(".key"):
            os.chmod(os.path.join(d, f), 0o600)
    os.chmod(d, 0o755)


@pytest.fixture(scope="module", autouse=True)
def tls_cluster(cluster, cli):
    global BINARY, PORT, SOCKET, CERTS, CA, OTHER, TOKEN
    BINARY = cli
    with tempfile.TemporaryDirectory(prefix="pg_todos-tls.") as certs, pg.own_cluster("tls", tcp=True) as c:
        make_certificates(certs)
        CERTS, CA, OTHER = certs, os.path.join(certs, "ca.crt"), os.path.join(certs, "other.crt")
        PORT, SOCKET = c.port, c.sock
        c.database(DB, tenants=["acme", "globex"])
        c.psql("CREATE ROLE cert_agent LOGIN; SELECT todo.grant_usage('cert_agent', 'acme', plain_sql => false);", db=DB)
        for name in ("server.crt", "server.key", "ca.crt"):
            with open(os.path.join(certs, name)) as f:
                c.write_file(name, f.read())
        c.append_conf("ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'", "ssl_ca_file = 'ca.crt'")
        c.write_file("pg_hba.conf", HBA)
        c.psql("SELECT pg_reload_conf()")
        time.sleep(0.5)
        TOKEN = c.psql("SELECT token FROM todo.create_token('acme', 'tls-test')", db=DB).strip()
        yield c
        shutil.rmtree(certs, ignore_errors=True)


def env(**extra):
    """A clean environment: no libpq variables but those given, HOME without ~/.postgresql."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "DATABASE_URL"))}
    e["HOME"] = CERTS  # no .postgresql there: no default root or client certificate
    e.update(extra)
    return e


def url(host="localhost", user="agent_login", **params):
    q = " ".join(f"{k}={v}" for k, v in params.items())
    return f"host={host} port={PORT} dbname={DB} user={user} {q}".strip()


free_port = pg.free_port


def serve(connection, **extra):
    """Starts the service on `connection`: ('ok', None) once /readyz is 200 and a request of
    the token is 200, else ('exit', stderr) when it exited."""
    port = free_port()
    p = subprocess.Popen([BINARY, "serve", "--listen", f"127.0.0.1:{port}"], env=env(DATABASE_URL=connection, **extra),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            if p.poll() is not None:
                return "exit", (p.returncode, p.stderr.read().strip())
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                    ready = r.status == 200
                req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/todos", headers={"Authorization": f"Bearer {TOKEN}"})
                with urllib.request.urlopen(req, timeout=5) as r:
                    return ("ok", None) if ready and r.status == 200 else ("bad", r.status)
            except OSError:
                time.sleep(0.1)
        return "timeout", None
    finally:
        if p.poll() is None:
            p.terminate()
            p.wait(10)


async def mcp_call(connection, extra):
    params = StdioServerParameters(command=BINARY, args=["mcp", "--tenant", "acme", "--conversation", "tls", "--tools", "todolist"],
                                   env=env(PG_TODOS_DATABASE_URL=connection, **extra), cwd="/tmp")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("todolist__get", {})
            return not r.is_error


def mcp(connection, **extra):
    """('ok', None) when a tool call over stdio succeeds, else ('exit', (status, stderr))."""
    p = subprocess.run([BINARY, "mcp", "--tenant", "acme", "--conversation", "tls"], env=env(PG_TODOS_DATABASE_URL=connection, **extra),
                       input="", capture_output=True, text=True, timeout=30)
    # with stdin closed at once, a server past its database checks stops at the MCP handshake
    if p.returncode == 2 and "cannot start the MCP session" not in p.stderr:
        return "exit", (p.returncode, p.stderr.strip())
    try:
        return ("ok", None) if asyncio.run(mcp_call(connection, extra)) else ("bad", None)
    except BaseException as e:  # the SDK wraps a server that exits in a task group's error
        return "error", repr(e)


def both(what, connection, expect_ok, words=(), **extra):
    for name, run in (("serve", serve), ("mcp", mcp)):
        got, detail = run(connection, **extra)
        if expect_ok:
            check(f"{name}: {what}", got == "ok", (got, detail))
        else:
            text = detail[1] if isinstance(detail, tuple) else str(detail)
            check(f"{name}: {what}", got == "exit" and detail[0] == 2 and all(w in text for w in words), (got, detail))


def test_both_commands_speak_tls_with_libpqs_meaning():
    both("verify-full with the test's CA and host localhost works", url(sslmode="verify-full", sslrootcert=CA), True)
    both("verify-full with another CA is refused: the certificate did not verify, check sslrootcert",
         url(sslmode="verify-full", sslrootcert=OTHER), False, ("cannot connect to the database", "certificate verify failed", "sslrootcert"))
    both("verify-full to 127.0.0.1 (not in the certificate) is refused, naming the host name",
         url(host="127.0.0.1", sslmode="verify-full", sslrootcert=CA), False, ("certificate verify failed", "host name"))
    both("verify-ca to 127.0.0.1 works (the chain is checked, not the name)",
         url(host="127.0.0.1", sslmode="verify-ca", sslrootcert=CA), True)
    both("require without a CA works", url(sslmode="require"), True)
    both("sslmode=disable is refused by the server, its words shown", url(sslmode="disable"), False,
         ("pg_hba.conf rejects connection", "no encryption"))
    both("PGSSLMODE=verify-full and PGSSLROOTCERT from the environment work", url(), True,
         PGSSLMODE="verify-full", PGSSLROOTCERT=CA)
    both("PGSSLROOTCERT of another CA from the environment is refused", url(), False, ("certificate verify failed",),
         PGSSLMODE="verify-full", PGSSLROOTCERT=OTHER)
    both("the URL form: ?sslmode=verify-full&sslrootcert=… works",
         f"postgresql://agent_login@localhost:{PORT}/{DB}?sslmode=verify-full&sslrootcert={CA}", True)
    both("a client certificate admits the role that needs one",
         url(user="cert_agent", sslmode="verify-full", sslrootcert=CA, sslcert=os.path.join(CERTS, "client.crt"),
             sslkey=os.path.join(CERTS, "client.key")), True)
    both("without its client certificate that role is refused by the server",
         url(user="cert_agent", sslmode="verify-full", sslrootcert=CA), False, ("cannot connect to the database",))
    both("sslrootcert is the only authority trusted, not the system's too (the test CA made a system root "
         "through SSL_CERT_FILE)", url(host="127.0.0.1", sslmode="verify-ca", sslrootcert=OTHER), False,
         ("certificate verify failed",), SSL_CERT_FILE=CA)
    both("over the Unix-domain socket verify-full with no root file connects without TLS, as libpq",
         f"host={SOCKET} port={PORT} dbname={DB} user=agent_login sslmode=verify-full", True)
    both("verify-full with no root certificate is refused before connecting, saying what to set",
         url(sslmode="verify-full"), False, ("no root certificate", "sslrootcert", "PGSSLROOTCERT"))


def test_https_for_the_service():
    """9. HTTPS for the service."""
    port = free_port()
    cert, key = os.path.join(CERTS, "server.crt"), os.path.join(CERTS, "server.key")
    p = subprocess.Popen([BINARY, "serve", "--listen", f"127.0.0.1:{port}", "--tls-cert", cert, "--tls-key", key,
                          "--header-timeout", "2"],
                         env=env(DATABASE_URL=url(sslmode="verify-full", sslrootcert=CA)),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        trusted = ssl.create_default_context(cafile=CA)
        got = None
        deadline = time.time() + 15
        while time.time() < deadline and got is None:
            try:
                with urllib.request.urlopen(f"https://localhost:{port}/healthz", context=trusted, timeout=5) as r:
                    got = r.status
            except OSError:
                time.sleep(0.1)
        check("https: /healthz over https://localhost with the test's CA", got == 200, got)
        req = urllib.request.Request(f"https://localhost:{port}/v1/todos", headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, context=trusted, timeout=5) as r:
            check("https: a request of the token", r.status == 200, r.status)
        try:
            urllib.request.urlopen(f"https://localhost:{port}/healthz", context=ssl.create_default_context(cafile=OTHER), timeout=5)
            refused = False
        except urllib.error.URLError as e:
            refused = "CERTIFICATE_VERIFY_FAILED" in str(e)
        check("https: a client with another CA refuses the service's certificate", refused)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                plain = r.status
        except Exception as e:  # the service answers a plain request with no HTTP at all
            plain = type(e).__name__
        check("https: plain HTTP to the port gets no HTTP answer", plain != 200, plain)
        silent = socket.create_connection(("127.0.0.1", port), timeout=10)
        t = time.monotonic()
        try:
            closed = silent.recv(1) == b""
        except OSError:
            closed = True
        took = time.monotonic() - t
        check("https: a connection that never starts the handshake is closed after --header-timeout (2 s)",
              closed and 1.5 < took < 6, (closed, round(took, 1)))
        silent.close()
    finally:
        p.terminate()
        p.wait(10)
    bad = subprocess.run([BINARY, "serve", "--tls-cert", cert], env=env(DATABASE_URL=url(sslmode="require")),
                         capture_output=True, text=True, timeout=30)
    check("https: --tls-cert without --tls-key: exit 2 saying to give both",
          bad.returncode == 2 and "give both" in bad.stderr, (bad.returncode, bad.stderr[:300]))
    wrong = subprocess.run([BINARY, "serve", "--listen", f"127.0.0.1:{free_port()}", "--tls-cert", cert,
                            "--tls-key", os.path.join(CERTS, "client.key")],
                           env=env(DATABASE_URL=url(sslmode="require")), capture_output=True, text=True, timeout=30)
    check("https: a key that is not the certificate's: exit 2 saying so",
          wrong.returncode == 2 and "not the key of --tls-cert" in wrong.stderr, (wrong.returncode, wrong.stderr[:300]))


