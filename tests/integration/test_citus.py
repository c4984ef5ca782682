"""The Citus tier: pg_todos distributed over a real 3-node cluster (a coordinator and two
workers on 127.0.0.1 at free ports, sockets under this run's directory), Citus 13.2 built and
installed by its setup-citus.sh (`../shared/citus/setup-citus.sh` beside the repository, or
CITUS_SETUP; without it every test here is skipped saying so, and fails under CI=true). All
through the coordinator:
  1. the pg_regress suite on a distributed store (expected output: tests/pg_regress/expected,
     except the files in tests/citus/expected, each difference justified in
     tests/citus/README.md; tests/citus/sql adds `distribute`), one check per pg_regress test;
  2. tenants on both workers (citus_store.py): concurrent claims, a transaction writing two
     tenants on two workers, LISTEN on the coordinator, tenant isolation as a plain role,
     todo.distribute()'s refusal of a non-owner;
  3. the update from the previous version on a distributed store (citus_update.py), then the
     checks of 2 on the updated store.
Alone: bin/test-integration test_citus.py (one step: -k regress, -k workers, -k update).
"""
import difflib
import glob
import os
import re
import shutil
import subprocess

import pytest

import citus_store
import citus_update
import pg
from checks import check, need

SETUP = os.environ.get("CITUS_SETUP") or os.path.join(os.path.dirname(pg.REPO), "shared", "citus", "setup-citus.sh")
PORTS = []  # the coordinator's, then the two workers'


def psql(sql, db="postgres", port=None):
    env = {**os.environ, "PGPORT": str(port or PORTS[0]), "PGOPTIONS": "-c client_min_messages=warning"}
    r = subprocess.run([f"{pg.BINDIR}/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"psql on port {port or PORTS[0]} failed: {r.stderr}")
    return r.stdout


@pytest.fixture(scope="module", autouse=True)
def citus(cluster):
    """The 3-node cluster, started for the module and stopped after it; libpq's variables point
    at the coordinator meanwhile."""
    need(os.path.isfile(SETUP), f"{SETUP} is missing (Citus 13.2's source and its setup script; set CITUS_SETUP)")
    base = pg.free_ports(3)
    PORTS[:] = [base, base + 1, base + 2]
    directory = os.path.join(pg.ROOT, "citus")
    saved = {k: os.environ.get(k) for k in ("PGHOST", "PGPORT", "RUST_BACKTRACE")}
    # pgrx adds a Rust backtrace to error details when RUST_BACKTRACE is set: outputs must not
    # depend on it (the nodes inherit the environment of setup-citus.sh)
    os.environ.pop("RUST_BACKTRACE", None)
    run = subprocess.run(["bash", SETUP, str(base), directory, "up"], capture_output=True, text=True)
    if run.returncode:
        pytest.fail(f"setup-citus.sh up failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    # pg_todos preloaded after citus on every node, as docs/operations.md asks (its LOCK guard
    # in every backend): a later line of postgresql.conf wins; the nodes restart to read it
    for port in PORTS:
        with open(os.path.join(directory, "nodes", str(port), "postgresql.conf"), "a") as f:
            f.write("shared_preload_libraries = 'citus, pg_todos'  # test_citus.py\n")
    for step in ("stop", "start"):
        run = subprocess.run(["bash", SETUP, str(base), directory, step], capture_output=True, text=True)
        if run.returncode:
            pytest.fail(f"setup-citus.sh {step} failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    os.environ.update(PGHOST=os.path.join(directory, "sock"), PGPORT=str(base))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        subprocess.run(["bash", SETUP, str(base), directory, "stop"], capture_output=True)


def newdb(name, version=None, role=True):
    """Database `name` on every node with citus; pg_todos (at `version`) created on the
    coordinator (Citus creates it on the workers); the plain role agent_login (with `role`)."""
    for port in PORTS:
        psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", port=port)
        psql(f"CREATE DATABASE {name}", port=port)
        psql("CREATE EXTENSION citus", db=name, port=port)
    psql(f"SELECT citus_set_coordinator_host('localhost', {PORTS[0]})", db=name)
    for port in PORTS[1:]:
        psql(f"SELECT citus_add_node('localhost', {port})", db=name)
    psql("CREATE EXTENSION pg_todos" + (f" VERSION '{version}'" if version else ""), db=name)
    # roles belong to the cluster: an earlier step may have made it already
    if role:
        psql("SELECT 'CREATE ROLE agent_login LOGIN' WHERE NOT EXISTS "
             "(SELECT 1 FROM pg_roles WHERE rolname = 'agent_login') \\gexec", db=name)


def test_regress_through_the_coordinator():
    newdb("regress", role=False)  # its 00_setup makes the role
    out = os.path.join(pg.ROOT, "citus-regress")  # the postgres user writes there
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(pg.REPO, "tests", "pg_regress", "sql"), os.path.join(out, "sql"))
    os.makedirs(os.path.join(out, "expected"))
    for f in glob.glob(os.path.join(pg.REPO, "tests", "pg_regress", "expected", "*.out")) + \
            glob.glob(os.path.join(pg.REPO, "tests", "citus", "expected", "*.out")):
        shutil.copy(f, os.path.join(out, "expected"))
    for f in glob.glob(os.path.join(pg.REPO, "tests", "citus", "sql", "*.sql")):
        shutil.copy(f, os.path.join(out, "sql"))
    for root, dirs, files in os.walk(out):
        for d in [root, *[os.path.join(root, f) for f in files]]:
            pg.own(d)
    tests = ["00_setup", "distribute"] + sorted(
        os.path.basename(f)[:-4] for f in glob.glob(os.path.join(pg.REPO, "tests", "pg_regress", "sql", "*.sql"))
        if not f.endswith("00_setup.sql"))
    regress = os.path.join(subprocess.run([f"{pg.BINDIR}/pg_config", "--pkglibdir"], capture_output=True, text=True,
                                          check=True).stdout.strip(), "pgxs/src/test/regress/pg_regress")
    # pg_regress runs them; the comparison is ours, with the numbers of the temporary schemas
    # (pg_temp_N, in Citus's warnings) and the worker a CONTEXT line names made alike
    ran = subprocess.run(pg.as_postgres([regress, "--use-existing", "--dbname=regress", f"--host={os.environ['PGHOST']}",
                                   f"--port={PORTS[0]}", "--user=postgres", f"--inputdir={out}", f"--outputdir={out}",
                                   *tests]), capture_output=True, text=True)
    print(ran.stdout[-1500:], ran.stderr[-1500:])

    def norm(path):
        with open(path, errors="replace") as f:
            return [re.sub(r"localhost:\d+", "localhost:N", re.sub(r"pg_temp_\d+", "pg_temp_N", line))
                    for line in f.read().splitlines()]
    results = os.path.join(pg.REPO, "tests", "citus", "results")
    os.makedirs(results, exist_ok=True)
    for t in tests:
        try:
            expected, got = norm(f"{out}/expected/{t}.out"), norm(f"{out}/results/{t}.out")
            shutil.copy(f"{out}/results/{t}.out", results)
        except FileNotFoundError as e:
            expected, got = [], [str(e)]
        check(f"pg_regress on Citus: {t}", expected == got,
              "\n" + "\n".join(list(difflib.unified_diff(expected, got, "expected", "results", lineterm=""))[:40]))


def test_tenants_on_both_workers():
    newdb("multi")
    psql("SELECT todo.grant_usage('agent_login'); SELECT todo.distribute();", db="multi")
    citus_store.run("multi")


def test_the_update_of_a_distributed_store():
    to = pg.version()
    updates = glob.glob(os.path.join(pg.REPO, "sql", f"pg_todos--*--{to}.sql"))
    check(f"an update script to {to} exists", updates, to)
    if not updates:
        return
    from_ = os.path.basename(updates[0])[len("pg_todos--"):].split("--")[0]
    newdb("upgraded", from_)
    citus_update.run("upgraded", from_, to)
    citus_store.run("upgraded")
