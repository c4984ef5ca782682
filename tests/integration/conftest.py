"""The integration harness's fixtures and its reporter.

Fixtures (pytest finds them by argument name):
  cluster        the session's cluster (Unix socket only), started once; its libpq
                 variables are in os.environ for every test, so psql, psycopg and the
                 services reach it without arguments
  new_cluster    a factory for a cluster of a test's own (a crash, TLS, a restart, memory
                 settings): new_cluster("name", conf=[...], tcp=False)
  database       a factory: database("name", tenants=[...]) is a fresh database in `cluster`
                 with the extension, agent_login and the tenants
  cli            the path of the pg_todos command, built once (cargo build -p pg_todos_cli)
  serve          a factory: serve(db, *flags, **env) is a running `pg_todos serve`
                 (web.Server) on a free port, as agent_login; stopped after the test
  require        require(condition, "what is missing and how to get it"): skips the test
                 saying so, or fails it under CI=true

The reporter: every check (checks.check) counts as one, a test without checks as one; the
run ends with one line `N passed, N failed` (and `skipped: …` naming each skip)."""
import os
import shutil
import subprocess

import pytest

import checks
import pg
import web

RESULTS = {}  # nodeid -> [passed, failed, skipped reason or None]


@pytest.fixture(scope="session")
def cluster():
    pg.remove_stale_runs()
    c = pg.Cluster("main")
    saved = {k: os.environ.get(k) for k in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE")}
    os.environ.update(PGHOST=c.sock, PGPORT=str(c.port), PGUSER="postgres")
    os.environ.pop("PGDATABASE", None)
    yield c
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    c.destroy()
    shutil.rmtree(pg.ROOT, ignore_errors=True)


@pytest.fixture
def new_cluster(monkeypatch):
    made = []

    def make(name, conf=(), tcp=False, use=True):
        """A cluster of this test's own; with `use`, libpq's variables point at it."""
        c = pg.Cluster(name, conf=conf, tcp=tcp)
        made.append(c)
        if use:
            monkeypatch.setenv("PGHOST", c.sock)
            monkeypatch.setenv("PGPORT", str(c.port))
        return c

    yield make
    for c in made:
        c.destroy()


@pytest.fixture
def database(cluster):
    return cluster.database


@pytest.fixture(scope="session")
def cli():
    r = subprocess.run(["cargo", "build", "-q", "-p", "pg_todos_cli"], cwd=pg.REPO,
                       capture_output=True, text=True)
    if r.returncode:
        pytest.fail("cargo build -p pg_todos_cli failed:\n" + r.stderr[-4000:])
    # where cargo built it: CARGO_TARGET_DIR when that is set (relative to the repository)
    target = os.path.join(pg.REPO, os.environ.get("CARGO_TARGET_DIR") or "target")
    return os.path.join(target, "debug", "pg_todos")


@pytest.fixture
def serve(cli):
    started = []

    def start(db, *flags, **kw):
        s = web.Server(cli, db, *flags, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def require():
    return checks.need


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    checks.current.clear()
    outcome = yield
    failed = [f"{name} {detail}".strip() for name, ok, detail in checks.current if not ok]
    if failed and outcome.excinfo is None:
        outcome.force_exception(AssertionError(
            f"{len(failed)} check(s) failed:\n  " + "\n  ".join(failed)))


def pytest_runtest_logreport(report):
    r = RESULTS.setdefault(report.nodeid, [0, 0, None])
    if report.when == "call":
        made = list(checks.current)
        passed = sum(1 for _, ok, _ in made if ok)
        failed = len(made) - passed
        if not made:
            passed, failed = (1, 0) if report.passed else (0, 1)
        elif report.failed and failed == 0:
            failed = 1  # it raised after its checks passed
        r[0] += passed
        r[1] += failed
    elif report.failed:
        r[1] += 1  # setup or teardown failed
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        r[2] = reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter):
    passed = sum(r[0] for r in RESULTS.values())
    failed = sum(r[1] for r in RESULTS.values())
    w = terminalreporter
    w.write_line("")
    for nodeid, (p, f, skip) in RESULTS.items():
        if skip:
            w.write_line(f"skipped: {nodeid}: {skip}")
        elif f:
            w.write_line(f"failed: {nodeid} ({f} of {p + f} checks)")
    w.write_line(f"{passed} passed, {failed} failed")
