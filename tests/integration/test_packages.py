"""packages: the packages bin/package makes, on a clean Debian 12 and a clean Debian 13.
  1. their contents: the extension's package holds the library, the control file, the install
     script of this version and of every released one, every upgrade script, a copyright file
     and a changelog, and nothing else (nothing from the build tree); the command's package
     holds pg_todos, pg_todos_mcp, the systemd unit and its environment file (a conffile);
  2. a minimal Debian 12 root made by debootstrap from the Debian registry (cached under
     /var/tmp between runs), with postgresql-15 installed from Debian and nothing else: no Rust,
     no compiler. The two packages install with dpkg (their dependencies are met);
     CREATE EXTENSION works (the time from `dpkg -i` to it is printed), and demo/demo.sql runs
     without an error; `pg_todos mcp` lists its tools over stdio and `pg_todos serve` answers
     /readyz and a request with a token; removing the extension's package with dpkg leaves
     PostgreSQL working;
  3. the same on a minimal Debian 13 root (bin/debian13 --minbase: its debootstrap tarball, cached
     under /var/cache/pg_todos) with only postgresql-17 from Debian: postgresql-17-pg-todos, built
     in bin/debian13's Debian 13 root, and the command's package install, CREATE EXTENSION works,
     demo/demo.sql runs to its end and `pg_todos mcp` lists its tools;
  4. the update from the previous version's package (built by `bin/package --source` from the
     last commit of that version): its database keeps every todo through `dpkg -i` of this
     version's package and ALTER EXTENSION pg_todos UPDATE.
Needs root (chroot, mount), debootstrap (bin/setup installs it) and the Debian registry: a
missing one skips saying so (a failure under CI=true). Builds the packages of PostgreSQL 15, 17
and 18 and of the command into this run's directory; the clean systems run 15's and 17's
(Debian 12 has no postgresql-18 nor 17: PGDG has).
The packages are debug builds (`bin/package --debug`), which reuse the builds bin/test's tiers
made (its tiers of 18 and 17 run before this one): release builds cost 15 minutes more on a
fresh machine, and differ only in an optimized library. PGTODOS_PACKAGE_RELEASE=1 builds and
tests release ones.
"""
import json
import os
import shutil
import subprocess
import time
import urllib.request

import pytest

import pg
from checks import check, need

CACHE = "/var/tmp/pg_todos-debootstrap/bookworm-minbase.tar"
MIRROR = "http://deb.debian.org/debian"
VERSION = pg.version()
OUT = None    # where bin/package wrote the packages
# debug builds, unless PGTODOS_PACKAGE_RELEASE=1 (the module's docstring)
PROFILE = [] if os.environ.get("PGTODOS_PACKAGE_RELEASE") == "1" else ["--debug"]
ROOT = None   # the Debian 12 root


def sh(cmd, check_rc=True, timeout=600, stdin=None, root=None):
    """`cmd` run by sh inside a Debian root (the Debian 12 one unless `root`), as root; (exit
    status, stdout + stderr)."""
    r = subprocess.run(["chroot", root or ROOT, "/bin/sh", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout, input=stdin,
                       env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root"})
    if check_rc and r.returncode:
        raise RuntimeError(f"in the Debian root: {cmd}: exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r.returncode, r.stdout + r.stderr


def psql(sql, db="postgres", user="postgres", root=None):
    return sh(f"su postgres -c \"psql -X -q -At -v ON_ERROR_STOP=1 -U {user} -d {db}\"", stdin=sql, root=root)[1]


def unpack_root(root, tarball):
    """A Debian root at `root` from a debootstrap tarball: the host's name servers, no service
    started by a package, /proc, /dev and /dev/pts mounted. The mounts, for unmount()."""
    os.makedirs(root)
    subprocess.run(["tar", "-C", root, "-xf", tarball], check=True)
    shutil.copy("/etc/resolv.conf", os.path.join(root, "etc", "resolv.conf"))
    # no service starts inside the root by itself (postgresql's postinst would try)
    with open(os.path.join(root, "usr", "sbin", "policy-rc.d"), "w") as f:
        f.write("#!/bin/sh\nexit 101\n")
    os.chmod(os.path.join(root, "usr", "sbin", "policy-rc.d"), 0o755)
    mounts = []
    for kind, what, where in (("proc", "proc", "proc"), ("bind", "/dev", "dev"), ("bind", "/dev/pts", "dev/pts")):
        target = os.path.join(root, where)
        args = ["mount", "-t", "proc", what, target] if kind == "proc" else ["mount", "--bind", what, target]
        subprocess.run(args, check=True)
        mounts.append(target)
    return mounts


def unmount(mounts):
    for target in reversed(mounts):
        subprocess.run(["umount", "-l", target])


def install_postgresql(major, suite, root):
    """Debian's postgresql-MAJOR alone into the root, its cluster MAJOR/main started on its Unix
    socket only (the network is the host's), where local roles log in without a password
    (Debian's default is peer: OS user = role)."""
    started = time.monotonic()
    sh(f"echo 'deb {MIRROR} {suite} main' >/etc/apt/sources.list && apt-get update -qq && "
       f"DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-{major} >/dev/null",
       timeout=1800, root=root)
    print(f"postgresql-{major} from Debian ({suite}) installed in the root in {time.monotonic() - started:.0f} s")
    sh(f"echo 'local all all trust' >/etc/postgresql/{major}/main/pg_hba.conf", root=root)
    pg_ctl(major, "start", root)


def pg_ctl(major, action, root=None, check_rc=True):
    return sh(f"su postgres -c \"/usr/lib/postgresql/{major}/bin/pg_ctl -D /var/lib/postgresql/{major}/main -w "
              f"-l /tmp/pg.log -o '-c config_file=/etc/postgresql/{major}/main/postgresql.conf "
              f"-c listen_addresses=' {action}\"", root=root, check_rc=check_rc)


@pytest.fixture(scope="module", autouse=True)
def debian(cluster):
    global OUT, ROOT
    need(os.getuid() == 0, "the package test needs root (chroot, mount)")
    need(shutil.which("debootstrap"), "debootstrap is missing (bin/setup installs it)")
    OUT = os.path.join(pg.ROOT, "packages")
    started = time.monotonic()
    built = subprocess.run([os.path.join(pg.REPO, "bin", "package"), "--out", OUT, "--major", "15", "--major", "17",
                            "--major", "18", *PROFILE], capture_output=True, text=True, cwd=pg.REPO)
    if built.returncode:
        pytest.fail(f"bin/package failed:\n{built.stdout[-3000:]}{built.stderr[-3000:]}")
    print(f"bin/package (15, 17 in the Debian 13 root, 18, the command) took {time.monotonic() - started:.0f} s")
    ROOT = os.path.join(pg.ROOT, "debian")
    if not os.path.exists(CACHE):
        fresh = CACHE + ".root"
        shutil.rmtree(fresh, ignore_errors=True)
        boot = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", fresh, MIRROR],
                              capture_output=True, text=True, timeout=1800)
        need(boot.returncode == 0, f"debootstrap from {MIRROR} failed: {boot.stdout[-500:]}{boot.stderr[-500:]}")
        subprocess.run(["tar", "-C", fresh, "-cf", CACHE, "."], check=True)
        shutil.rmtree(fresh, ignore_errors=True)
    mounts = unpack_root(ROOT, CACHE)
    try:
        install_postgresql("15", "bookworm", ROOT)
        yield
    finally:
        pg_ctl("15", "-m immediate stop", check_rc=False)
        unmount(mounts)


@pytest.fixture(scope="module")
def debian13():
    """A clean Debian 13 root with only postgresql-17 from Debian (its cluster started): its path."""
    tarball = subprocess.run([os.path.join(pg.REPO, "bin", "debian13"), "--minbase"], capture_output=True, text=True)
    need(tarball.returncode == 0, f"bin/debian13 --minbase failed: {tarball.stderr[-1000:]}")
    root = os.path.join(pg.ROOT, "debian13")
    mounts = unpack_root(root, tarball.stdout.strip())
    try:
        install_postgresql("17", "trixie", root)
        yield root
    finally:
        pg_ctl("17", "-m immediate stop", root, check_rc=False)
        unmount(mounts)


def package(name):
    return os.path.join(OUT, f"{name}_{VERSION}-1_amd64.deb")


def contents(deb):
    listed = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1].lstrip(".") for line in listed.splitlines() if not line.startswith("d"))


@pytest.mark.parametrize("major", ["15", "17", "18"])
def test_the_extensions_package_holds_what_it_should(major):
    ext = contents(package(f"postgresql-{major}-pg-todos"))
    scripts = sorted(f for f in os.listdir(os.path.join(pg.REPO, "sql")) if f.startswith("pg_todos--"))
    expected = sorted({f"/usr/lib/postgresql/{major}/lib/pg_todos.so",
                       f"/usr/share/postgresql/{major}/extension/pg_todos.control",
                       f"/usr/share/postgresql/{major}/extension/pg_todos--{VERSION}.sql",
                       f"/usr/share/doc/postgresql-{major}-pg-todos/copyright",
                       f"/usr/share/doc/postgresql-{major}-pg-todos/changelog.gz"}
                      | {f"/usr/share/postgresql/{major}/extension/{f}" for f in scripts})
    check(f"postgresql-{major}-pg-todos: the library, the control file, this version's install script, every "
          "released install script and every upgrade script, the copyright and changelog, nothing else",
          ext == expected, sorted(set(ext) ^ set(expected)))
    # (this version's install script is among the released ones once it is released)
    released = [v for v in pg.released() if v != VERSION]
    check(f"postgresql-{major}-pg-todos: every earlier released version ({', '.join(released)}) can be updated from",
          all(any(f.startswith(f"/usr/share/postgresql/{major}/extension/pg_todos--{v}--") for f in ext)
              for v in released))
    info = subprocess.run(["dpkg-deb", "-f", package(f"postgresql-{major}-pg-todos"), "Version", "Depends"],
                          capture_output=True, text=True).stdout
    check(f"postgresql-{major}-pg-todos: version {VERSION}-1, depends on postgresql-{major}",
          f"Version: {VERSION}-1" in info and f"postgresql-{major}," in info, info)


def test_the_commands_package_holds_what_it_should():
    cli = contents(package("pg-todos"))
    check("the command's package: pg_todos, pg_todos_mcp, the systemd unit, its settings, the docs",
          cli == sorted(["/usr/bin/pg_todos", "/usr/bin/pg_todos_mcp", "/lib/systemd/system/pg-todos.service",
                         "/etc/default/pg-todos", "/usr/share/doc/pg-todos/http.md", "/usr/share/doc/pg-todos/mcp.md",
                         "/usr/share/doc/pg-todos/agents.md", "/usr/share/doc/pg-todos/copyright"]), cli)
    conffiles = subprocess.run(["dpkg-deb", "-I", package("pg-todos"), "conffiles"], capture_output=True, text=True)
    check("/etc/default/pg-todos is a conffile (an upgrade keeps the administrator's settings)",
          conffiles.stdout.strip() == "/etc/default/pg-todos", conffiles.stdout)
    info = subprocess.run(["dpkg-deb", "-f", package("pg-todos"), "Version", "Depends"], capture_output=True,
                          text=True).stdout
    check(f"pg-todos: version {VERSION}-1, depends on libssl3", f"Version: {VERSION}-1" in info and "libssl3" in info, info)
    tarballs = sorted(f for f in os.listdir(OUT) if f.endswith(".tar.gz"))
    check("a tarball of each for other distributions",
          tarballs == [f"pg_todos-{VERSION}-linux-x86_64.tar.gz", f"pg_todos-{VERSION}-pg15-linux-x86_64.tar.gz",
                       f"pg_todos-{VERSION}-pg17-linux-x86_64.tar.gz", f"pg_todos-{VERSION}-pg18-linux-x86_64.tar.gz"],
          tarballs)


def install_and_run_the_demo(cluster, major, root=None):
    """The extension's and the command's packages installed with dpkg into a clean root with only
    postgresql-MAJOR, the library preloaded as the README says, CREATE EXTENSION, and the demo to
    its end with the errors a source build shows."""
    where = "Debian 12" if root is None else "Debian 13"
    code, out = sh("command -v rustc cargo cc gcc clang || true", root=root)
    check(f"the {where} root has no Rust and no compiler", out.strip() == "", out)
    for name in (f"postgresql-{major}-pg-todos", "pg-todos"):
        shutil.copy(package(name), os.path.join(root or ROOT, "tmp"))
    started = time.monotonic()
    code, out = sh(f"dpkg -i /tmp/postgresql-{major}-pg-todos_{VERSION}-1_amd64.deb /tmp/pg-todos_{VERSION}-1_amd64.deb",
                   check_rc=False, root=root)
    check(f"{where}: dpkg -i installs both packages (their dependencies met by postgresql-{major})", code == 0,
          out[-2000:])
    check(f"{where}: the extension's package says to preload the library", "shared_preload_libraries" in out,
          out[-2000:])
    # as the README says: the library preloaded through a conf.d file, then a restart
    sh(f"echo \"shared_preload_libraries = 'pg_todos'\" >/etc/postgresql/{major}/main/conf.d/pg_todos.conf", root=root)
    pg_ctl(major, "restart", root)
    psql("CREATE DATABASE app", root=root)
    created = psql("CREATE EXTENSION pg_todos; SELECT extversion FROM pg_extension WHERE extname = 'pg_todos';",
                   db="app", root=root)
    took = time.monotonic() - started
    print(f"{where}, PostgreSQL {major}: from dpkg -i to CREATE EXTENSION: {took:.1f} s")
    check(f"{where}: CREATE EXTENSION pg_todos gives {VERSION}, with no warning (the library is preloaded)",
          created.strip() == VERSION, created)
    # the demo, as bin/demo runs it (it shows a refused transition on purpose): to its end, with
    # the errors it has from a source build (the run's own cluster)
    with open(os.path.join(pg.REPO, "demo", "demo.sql")) as f:
        demo = f.read() + "\n\\echo END OF THE DEMO\n"
    with open(os.path.join(root or ROOT, "tmp", "demo.sql"), "w") as f:
        f.write(demo)
    psql("CREATE DATABASE demo; CREATE ROLE demo_agent LOGIN;", root=root)
    code, out = sh("su postgres -c 'psql -X -q -d demo -f /tmp/demo.sql'", check_rc=False, root=root)
    cluster.database("demo_source", extension=False)
    cluster.psql("DROP ROLE IF EXISTS demo_agent; CREATE ROLE demo_agent LOGIN;")
    source = subprocess.run([f"{pg.BINDIR}/psql", "-X", "-q", "-d", "demo_source"], input=demo, capture_output=True,
                            text=True, env={**os.environ, **cluster.env("demo_source")})
    errors = lambda text: [line.split("ERROR:", 1)[1].strip() for line in text.splitlines() if "ERROR:" in line]
    check(f"{where}, PostgreSQL {major}: demo/demo.sql runs to its end, with the errors a source build shows "
          "(one on purpose)",
          code == 0 and "END OF THE DEMO" in out and errors(out) == errors(source.stdout + source.stderr)
          and len(errors(out)) >= 1, (errors(out), errors(source.stdout + source.stderr), out[-1000:]))

    # the command lists its tools over stdio
    psql("CREATE ROLE agent LOGIN; SELECT todo.grant_usage('agent'); INSERT INTO todo.tenants VALUES ('acme');",
         db="app", root=root)
    requests = "\n".join(json.dumps(m) for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dpkg-test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]) + "\n"
    code, out = sh("cd /tmp && PGHOST=/var/run/postgresql PGDATABASE=app PGUSER=agent timeout 20 "
                   "pg_todos mcp --tenant acme --tools claude-tasks", check_rc=False, stdin=requests, root=root)
    listed = [json.loads(line) for line in out.splitlines() if line.startswith('{"jsonrpc"')]
    names = sorted(t["name"] for m in listed if m.get("id") == 2 for t in m["result"]["tools"])
    check(f"{where}: pg_todos mcp (from the package) lists its tools over stdio",
          names == ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"], out[-1500:])


def test_a_clean_debian_installs_and_runs_them(cluster):
    install_and_run_the_demo(cluster, "15")

    # the HTTP service, against it
    token = psql("SELECT token FROM todo.create_token('acme', 'dpkg-test');", db="app").strip()
    port = pg.free_port()
    # a child of this test (chroot, then exec: its pid is the service's), stopped below whatever
    # happens: a minimal Debian root has no pkill, so a service started in the background there
    # outlived the run
    log = open(os.path.join(ROOT, "tmp", "serve.log"), "w")
    service = subprocess.Popen(
        ["chroot", ROOT, "/bin/sh", "-c", "cd /tmp && exec pg_todos serve"], stdout=log, stderr=subprocess.STDOUT,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root",
             "PGHOST": "/var/run/postgresql", "PGDATABASE": "app", "PGUSER": "agent",
             "PG_TODOS_LISTEN": f"127.0.0.1:{port}"})
    try:
        serve_the_package(port, token)
    finally:
        stop(service)
        log.close()
    check("pg_todos serve (from the package) stopped with the test", service.poll() is not None, service.poll())

    # removal
    code, out = sh("dpkg -r postgresql-15-pg-todos", check_rc=False)
    left = sh("ls /usr/share/postgresql/15/extension/ | grep -c pg_todos || true", check_rc=False)[1].strip()
    check("dpkg -r removes the extension's files", code == 0 and left == "0", (out[-500:], left))
    check("PostgreSQL still works after the removal", psql("SELECT 1;").strip() == "1")


def stop(process):
    """Stops a child process: SIGTERM, then SIGKILL if it is still there after 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_the_package(port, token):
    """The packaged pg_todos serve on `port` is ready and writes a todo with `token`."""
    ready = None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and ready != 200:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                ready = r.status
        except OSError:
            time.sleep(0.2)
    check("pg_todos serve (from the package) is ready", ready == 200, sh("cat /tmp/serve.log", check_rc=False)[1][-1000:])
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/todos", method="POST",
                                 data=json.dumps({"subject": "from the package"}).encode(),
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            created = r.status, json.loads(r.read())
    except OSError as e:
        created = None, {"todo": {"subject": repr(e)}}
    check("a request with a token writes a todo", created[0] == 201 and created[1]["todo"]["subject"] == "from the package",
          created)


def test_a_clean_debian_13_installs_the_postgresql_17_package_and_runs_the_demo(cluster, debian13):
    install_and_run_the_demo(cluster, "17", debian13)
    code, out = sh("dpkg -r postgresql-17-pg-todos", check_rc=False, root=debian13)
    check("Debian 13: dpkg -r removes the extension's package", code == 0, out[-500:])


def previous_release():
    """(version, revision): the last released version before this one and the last commit at it:
    the parent of the newest commit that changed Cargo.toml's `version = "X.Y.Z"` line of it (the
    one that moved the workspace on; an unreleased version may have come between, as 0.11.0
    between 0.10.0 and 1.0.0)."""
    version = [v for v in pg.released() if v != VERSION][-1]
    changed = subprocess.run(["git", "log", "--format=%H", "-S", f'version = "{version}"', "--", "Cargo.toml"],
                             capture_output=True, text=True, cwd=pg.REPO, check=True).stdout.split()
    return version, (changed[0] + "^") if changed else None


def test_an_update_from_the_previous_package_keeps_the_data():
    old, rev = previous_release()
    check(f"the last commit at {old} is found in the history", rev is not None, VERSION)
    if rev is None:
        return
    olds = os.path.join(OUT, "previous")
    built = subprocess.run([os.path.join(pg.REPO, "bin", "package"), "--out", olds, "--major", "15", "--source", rev,
                            *PROFILE],
                           capture_output=True, text=True, cwd=pg.REPO)
    check(f"bin/package --source {rev} builds {old}'s package", built.returncode == 0, built.stderr[-2000:])
    if built.returncode:
        return
    shutil.copy(os.path.join(olds, f"postgresql-15-pg-todos_{old}-1_amd64.deb"), os.path.join(ROOT, "tmp"))
    code, out = sh(f"dpkg -i /tmp/postgresql-15-pg-todos_{old}-1_amd64.deb", check_rc=False)
    check(f"{old}'s package installs", code == 0, out[-1000:])
    psql("CREATE DATABASE kept")
    psql("CREATE EXTENSION pg_todos; INSERT INTO todo.tenants VALUES ('acme');", db="kept")
    at = psql("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos';", db="kept").strip()
    check(f"CREATE EXTENSION from it gives {old}", at == old, at)
    psql("BEGIN; SELECT todo.set_context('acme', 'conv-1', 'planner'); "
         "SELECT todo.todo_writ(E'/todo add keep me\\n/todo add and me\\n/todo start 1'); COMMIT;", db="kept")
    snapshot = "SELECT id, subject, status FROM todo.todos ORDER BY id;"
    before = psql(snapshot, db="kept")
    shutil.copy(package("postgresql-15-pg-todos"), os.path.join(ROOT, "tmp"))
    code, out = sh(f"dpkg -i /tmp/postgresql-15-pg-todos_{VERSION}-1_amd64.deb", check_rc=False)
    check(f"{VERSION}'s package installs over {old}'s", code == 0, out[-1000:])
    now = psql("ALTER EXTENSION pg_todos UPDATE; SELECT extversion FROM pg_extension WHERE extname = 'pg_todos';",
               db="kept").strip()
    check(f"ALTER EXTENSION pg_todos UPDATE reaches {VERSION}", now == VERSION, now)
    after = psql(snapshot, db="kept")
    check("every todo is kept", before == after and "keep me" in after, (before, after))
    broken = psql("SELECT count(*) FROM todo.verify();", db="kept").strip()
    check("todo.verify() finds nothing after the update", broken == "0", broken)
