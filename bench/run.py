#!/usr/bin/env python3
"""Runs the pgbench comparison groups (see bench/run) and prints the Markdown report."""
import os
import re
import statistics
import subprocess
import sys
import datetime

SECONDS, RUNS = int(sys.argv[1]), int(sys.argv[2])
CLIENTS = os.cpu_count() or 2
PGBENCH = "/usr/lib/postgresql/15/bin/pgbench"
S = "bench/scripts/"

# (group, database, [(script, label, baseline script or None)])
GROUPS = [
    ("add", "bench_1m", [("writ_add", "todo_writ('/todo add …')", "hand_add"), ("hand_add", "hand-written add transaction", None),
                         ("bare_insert", "bare INSERT (floor)", None)]),
    ("start/done", "bench_1m", [("writ_cycle", "todo_writ start + done + reopen", "hand_cycle"),
                                ("hand_cycle", "hand-written 3 UPDATEs + 3 events", None)]),
    ("read", "bench_1m", [("open_block", "todo_open_block(conv)", "hand_list"), ("writ_list", "todo_writ('/todo list')", "hand_list"),
                          ("hand_list", "hand-written query (string_agg)", None)]),
    ("replace", "bench_1m", [("todolist_set", "todolist__set, 10 items", "hand_replace"),
                             ("todowrite", "todowrite, 10 items", "hand_replace"),
                             ("hand_replace", "hand-written replace of 10 rows", None)]),
    ("claim", "bench_1m", [("claim_next", "todo.claim() next ready + todo.release()", "hand_claim"),
                           ("hand_claim", "hand-written UPDATE … FOR UPDATE SKIP LOCKED + release, 2 events", None)]),
]
SCALING = [("read", "bench_10k", GROUPS[2][2])]


def psql(sql, db="postgres"):
    subprocess.run(["psql", "-X", "-q", "-d", db, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def pgbench(db, scripts, tenants):
    cmd = [PGBENCH, "-n", "-M", "prepared", "-U", "bench_agent", "-c", str(CLIENTS), "-j", str(CLIENTS),
           "-T", str(SECONDS), "-D", f"tenants={tenants}"]
    for s in scripts:
        cmd += ["-f", S + s + ".sql"]
    out = subprocess.run(cmd + [db], check=True, capture_output=True, text=True).stdout
    lat = {}
    for m in re.finditer(r"SQL script \d+: \S+/(\w+)\.sql\n(?:.*\n)*? - latency average = ([\d.]+) ms", out):
        lat[m[1]] = float(m[2])
    failed = re.search(r"number of failed transactions: (\d+)", out)
    if len(scripts) == 1:
        lat[scripts[0]] = float(re.search(r"latency average = ([\d.]+) ms", out)[1])
    missing = [s for s in scripts if s not in lat]
    if missing:
        raise SystemExit(f"no latency for {missing} in:\n{out}")
    return lat, int(failed[1]) if failed else 0


def measure(db, group):
    tenants = 1000 if db == "bench_1m" else 10
    scripts = [s for s, _, _ in group]
    runs = [pgbench(db, scripts, tenants) for _ in range(RUNS)]
    failed = sum(f for _, f in runs)
    return {s: statistics.median(r[0][s] for r in runs) for s in scripts}, failed


def main():
    machine = subprocess.run(["bash", "-c", "echo \"$(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(lscpu | sed -n 's/^Model name: *//p')\""],
                             capture_output=True, text=True).stdout.strip()
    version = subprocess.run(["psql", "-X", "-At", "-d", "postgres", "-c", "SHOW server_version"], capture_output=True, text=True).stdout.strip()
    print(f"# Benchmark results\n\nCommand: `bench/run {SECONDS} {RUNS}` — {datetime.date.today()}; machine: {machine}; PostgreSQL {version}.")
    print(f"pgbench -M prepared, {CLIENTS} clients, {SECONDS} s per run, median latency of {RUNS} runs; each group's scripts share")
    print("one pgbench run (transactions dealt by weight), so compare latencies, not tps. Ratio = baseline latency / ours:")
    print("above 1.0 we are faster. Data: 1,000 tenants × 20 conversations × 50 todos (1.05 M rows).\n")
    results = {}
    for sync in ["off", "on"]:
        psql(f"ALTER SYSTEM SET synchronous_commit = {sync}")
        psql("SELECT pg_reload_conf()")
        print(f"## synchronous_commit = {sync}\n")
        print("| group | operation | latency (ms) | ops/s per client | ratio to baseline |")
        print("|---|---|---|---|---|")
        for name, db, group in GROUPS:
            lat, failed = measure(db, group)
            results[(sync, name)] = lat
            for script, label, base in group:
                ratio = f"{lat[base] / lat[script]:.2f}× {base}" if base else "baseline"
                if script == "writ_add":
                    ratio += f", {lat['bare_insert'] / lat[script]:.2f}× bare_insert"
                print(f"| {name} | {label} | {lat[script]:.3f} | {1000 / lat[script]:.0f} | {ratio} |")
            if failed:
                print(f"| {name} | failed transactions | {failed} | | |")
        print()
    print("## Scaling: the same reads at 10.5 thousand and 1.05 million rows (synchronous_commit = on)\n")
    print("| operation | 10k rows (ms) | 1M rows (ms) | 1M / 10k |")
    print("|---|---|---|---|")
    small, _ = measure("bench_10k", GROUPS[2][2])
    big = results[("on", "read")]
    for script, label, _ in GROUPS[2][2]:
        print(f"| {label} | {small[script]:.3f} | {big[script]:.3f} | {big[script] / small[script]:.2f} |")


if __name__ == "__main__":
    main()
