"""Runs the cluster comparison of bench/cluster: each script with 2 and 8 clients against one
server and against the Citus coordinator; prints the "Citus cluster" section of
bench/results.md. Usage: python3 bench/cluster.py SECONDS ONE_HOST:PORT CITUS_HOST:PORT"""
import datetime
import os
import re
import subprocess
import sys

SECONDS = sys.argv[1]
TARGETS = {"one server": sys.argv[2], "Citus": sys.argv[3]}
PGBENCH = os.environ.get("PGBENCH")  # bench/cluster exports it (bin/lib/pg.sh finds PostgreSQL)
if not PGBENCH:
    sys.exit("bench/cluster.py: PGBENCH is not set: run bench/cluster, which exports it")
# (script, label, role)
SCRIPTS = [("writ_add", "todo_writ('/todo add …')", "bench_agent"),
           ("claim_work", "add + todo.claim() + todo.finish(), one transaction", "bench_agent"),
           ("writ_list", "todo_writ('/todo list')", "bench_agent"),
           ("plain_read", "floor: one conversation's rows by plain SQL, as the owner", "postgres")]
CLIENTS = [2, 8]


def tps(target, script, role, clients):
    host, port = target.rsplit(":", 1)
    out = subprocess.run([PGBENCH, "-n", "-M", "prepared", "-h", host, "-p", port, "-U", role,
                          "-c", str(clients), "-j", "2", "-T", SECONDS, "-D", "tenants=100",
                          "-f", f"bench/scripts/{script}.sql", "bench"], check=True, capture_output=True, text=True).stdout
    failed = re.search(r"number of failed transactions: (\d+)", out)
    if failed and int(failed[1]):
        raise SystemExit(f"{script} on {target}: {failed[1]} failed transactions\n{out}")
    return float(re.search(r"tps = ([\d.]+)", out)[1])


version = subprocess.run(["psql", "-X", "-At", "-h", TARGETS["Citus"].rsplit(":", 1)[0], "-p", TARGETS["Citus"].rsplit(":", 1)[1],
                          "-U", "postgres", "-d", "bench", "-c", "SELECT extversion FROM pg_extension WHERE extname = 'citus'"],
                         check=True, capture_output=True, text=True).stdout.strip()
print("## Citus cluster next to one server\n")
ours = subprocess.run(["bin/version"], check=True, capture_output=True, text=True).stdout.strip()
print(f"Command: `bench/cluster {SECONDS}` — {datetime.date.today()}; pg_todos {ours}; Citus {version}, a coordinator and two workers on this")
print("same machine (2 cores shared by every node and pgbench), so only the ratio means anything.")
print("pgbench -M prepared, transactions per second; 100 tenants × 20 conversations × 5 todos;")
print("synchronous_commit = off everywhere. Ratio = Citus / one server.\n")
print("| operation | clients | one server (tps) | Citus (tps) | ratio |")
print("|---|---|---|---|---|")
for script, label, role in SCRIPTS:
    for clients in CLIENTS:
        one, citus = (tps(TARGETS[k], script, role, clients) for k in ("one server", "Citus"))
        print(f"| {label} | {clients} | {one:.0f} | {citus:.0f} | {citus / one:.2f}× |")
