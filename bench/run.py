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
PGBENCH = os.environ.get("PGBENCH")  # bench/run exports it (bin/lib/pg.sh finds PostgreSQL)
if not PGBENCH:
    sys.exit("bench/run.py: PGBENCH is not set: run bench/run, which exports it")
S = "bench/scripts/"

# (group, database, [(script, label, baseline script or None)])
GROUPS = [
    ("add", "bench_1m", [("writ_add", "todo_writ('/todo add …')", "hand_add"),
                         ("rest_post", "todo.rest('POST', '/v1/todos')", "hand_add"),
                         ("hand_add", "hand-written add transaction", None),
                         ("bare_insert", "bare INSERT (floor)", None)]),
    ("start/done", "bench_1m", [("writ_cycle", "todo_writ start + done + reopen", "hand_cycle"),
                                ("hand_cycle", "hand-written 3 UPDATEs + 3 events", None)]),
    ("cancel", "bench_1m", [("writ_cancel", "todo_writ cancel + reopen", "hand_cancel"),
                            ("hand_cancel", "hand-written 2 UPDATEs + 2 events", None)]),
    ("patch", "bench_1m", [("rest_patch", "todo.rest PATCH status twice", "hand_patch"),
                           ("hand_patch", "hand-written 2 UPDATEs + 2 events", None)]),
    ("read", "bench_1m", [("open_block", "todo_open_block(conv)", "hand_list"), ("writ_list", "todo_writ('/todo list')", "hand_list"),
                          ("hand_list", "hand-written query (string_agg)", None)]),
    ("replace", "bench_1m", [("todolist_set", "todolist__set, 10 items", "hand_replace"),
                             ("todowrite", "todowrite, 10 items", "hand_replace"),
                             ("hand_replace", "hand-written diff of 10 rows + events", None)]),
    ("claim", "bench_1m", [("claim_next", "todo.claim() next ready + todo.release()", "hand_claim"),
                           ("hand_claim", "hand-written UPDATE … FOR UPDATE SKIP LOCKED + release, 2 events", None)]),
]
READ = next(g for name, _, g in GROUPS if name == "read")

# (what, script, baseline, synchronous_commit, target ratio); "scale" compares the 1M-row run
# with the 10k-row one (ours 10k / ours 1M: above the target is good)
TARGETS = [
    ("writ add", "writ_add", "hand_add", "off", 1.0),
    ("writ start + done + reopen", "writ_cycle", "hand_cycle", "off", 1.0),
    ("writ cancel + reopen", "writ_cancel", "hand_cancel", "off", 1.0),
    ("todolist__set, 10 items", "todolist_set", "hand_replace", "off", 1.0),
    ("todowrite, 10 items", "todowrite", "hand_replace", "off", 1.0),
    ("REST POST", "rest_post", "hand_add", "off", 1.0),
    ("REST PATCH ×2", "rest_patch", "hand_patch", "off", 1.0),
    ("claim-next + release", "claim_next", "hand_claim", "off", 1.0),
    ("open block", "open_block", "hand_list", "off", 0.95),
    ("/todo list", "writ_list", "hand_list", "off", 0.95),
    ("writ add vs bare INSERT (sync on)", "writ_add", "bare_insert", "on", 0.7),
]
# cost at 1M rows at most 1.1× the cost at 10k: ratio 10k/1M at least 1/1.1
SCALE_TARGETS = [("open block at 1M vs 10k rows", "open_block"), ("/todo list at 1M vs 10k rows", "writ_list")]

# scaling with clients: writ add, synchronous_commit off, tps at 1, 2 and 8 clients
SCALING_CLIENTS = [1, 2, 8]

# many writers of many tenants: each write alone (throughput) beside its hand-written equivalent,
# at MANY_CLIENTS clients with synchronous_commit on and off, on the first 200 and on all 1,000
# tenants; the writ's add also at every count of WRITER_CLIENTS (synchronous_commit on)
MANY = [("writ add", "writ_add", "hand_add"), ("REST POST", "rest_post", "hand_add"),
        ("todowrite, 10 items", "todowrite", "hand_replace"), ("claim + release", "claim_next", "hand_claim")]
MANY_CLIENTS = 8
MANY_TENANTS = [200, 1000]
WRITER_CLIENTS = [1, 2, 4, 8, 16]


def psql(sql, db="postgres"):
    subprocess.run(["psql", "-X", "-q", "-d", db, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def pgbench(db, scripts, tenants, clients=CLIENTS):
    cmd = [PGBENCH, "-n", "-M", "prepared", "-U", "bench_agent", "-c", str(clients), "-j", str(min(clients, CLIENTS)),
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
    tps = float(re.search(r"tps = ([\d.]+)", out)[1])
    return lat, int(failed[1]) if failed else 0, tps


def measure(db, group):
    tenants = 1000 if db == "bench_1m" else 10
    scripts = [s for s, _, _ in group]
    runs = [pgbench(db, scripts, tenants) for _ in range(RUNS)]
    failed = sum(r[1] for r in runs)
    return {s: statistics.median(r[0][s] for r in runs) for s in scripts}, failed


def tps(db, script, tenants, clients):
    runs = [pgbench(db, [script], tenants, clients) for _ in range(RUNS)]
    return statistics.median(r[2] for r in runs), sum(r[1] for r in runs)


def chart(rows, path):
    """An SVG bar chart: each ratio against its target (a tick); green when met."""
    width, left, bar_h, gap = 760, 300, 18, 8
    top = max(2.0, max(r for _, r, _ in rows) * 1.1)
    scale = (width - left - 20) / top
    height = 40 + len(rows) * (bar_h + gap)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<text x="{left}" y="16">ratio = baseline latency / ours (higher is better); tick = target</text>']
    for i, (label, ratio, target) in enumerate(rows):
        y = 30 + i * (bar_h + gap)
        color = "#2e8b57" if ratio >= target else "#c0392b"
        out.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{ratio * scale:.1f}" height="{bar_h}" fill="{color}"/>')
        out.append(f'<text x="{left + ratio * scale + 4:.1f}" y="{y + 13}">{ratio:.2f}×</text>')
        out.append(f'<line x1="{left + target * scale:.1f}" x2="{left + target * scale:.1f}" y1="{y - 2}" y2="{y + bar_h + 2}" stroke="black" stroke-width="2"/>')
    out.append(f'<line x1="{left + scale:.1f}" x2="{left + scale:.1f}" y1="24" y2="{height}" stroke="#888" stroke-dasharray="3,3"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    machine = subprocess.run(["bash", "-c", "echo \"$(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(lscpu | sed -n 's/^Model name: *//p')\""],
                             capture_output=True, text=True).stdout.strip()
    version = subprocess.run(["psql", "-X", "-At", "-d", "postgres", "-c", "SHOW server_version"], capture_output=True, text=True).stdout.strip()
    ours = subprocess.run(["bin/version"], check=True, capture_output=True, text=True).stdout.strip()
    print(f"# Benchmark results\n\nCommand: `bench/run {SECONDS} {RUNS}` — {datetime.date.today()}; pg_todos {ours}; machine: {machine}; PostgreSQL {version}.")
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
    print("## Rows: the same reads at 10.5 thousand and 1.05 million rows (synchronous_commit = on)\n")
    print("| operation | 10k rows (ms) | 1M rows (ms) | 1M / 10k |")
    print("|---|---|---|---|")
    small, _ = measure("bench_10k", READ)
    big = results[("on", "read")]
    for script, label, _ in READ:
        print(f"| {label} | {small[script]:.3f} | {big[script]:.3f} | {big[script] / small[script]:.2f} |")
    print()

    psql("ALTER SYSTEM SET synchronous_commit = off")
    psql("SELECT pg_reload_conf()")
    print("## Scaling with clients: writ add, synchronous_commit = off\n")
    print("Throughput (transactions/s, median of the runs) of `writ_add.sql` alone, on 1,000 tenants")
    print("(each transaction a random one) and on one tenant (every client writes the same tenant).\n")
    print("| tenants | " + " | ".join(f"{c} client{'s' if c > 1 else ''}" for c in SCALING_CLIENTS) + " | 2 clients / 1 | failed |")
    print("|---|" + "---|" * (len(SCALING_CLIENTS) + 2))
    scaling = {}
    for label, tenants in [("distinct (1,000)", 1000), ("one", 1)]:
        row = {c: tps("bench_1m", "writ_add", tenants, c) for c in SCALING_CLIENTS}
        scaling[tenants] = row[2][0] / row[1][0]
        failed = sum(f for _, f in row.values())
        print(f"| {label} | " + " | ".join(f"{row[c][0]:.0f}" for c in SCALING_CLIENTS) + f" | {scaling[tenants]:.2f}× | {failed} |")
    print()

    print("## Many writers, many tenants: throughput beside the hand-written transaction\n")
    print(f"Each script alone, {MANY_CLIENTS} clients (each transaction a random tenant of the first N), transactions/s")
    print("(median of the runs); ratio = ours / hand-written. With synchronous_commit on, a commit waits for its")
    print("flush: no write of pg_todos takes a lock another tenant's commit waits for (no NOTIFY: todo.notify = off).\n")
    print("| synchronous_commit | tenants | operation | ours | hand-written | ratio |")
    print("|---|---|---|---|---|---|")
    many = {}
    for sync in ["on", "off"]:
        psql(f"ALTER SYSTEM SET synchronous_commit = {sync}")
        psql("SELECT pg_reload_conf()")
        for tenants in MANY_TENANTS:
            hands = {}
            for label, script, base in MANY:
                if base not in hands:
                    hands[base] = tps("bench_1m", base, tenants, MANY_CLIENTS)[0]
                ours = tps("bench_1m", script, tenants, MANY_CLIENTS)[0]
                many[(sync, tenants, script)] = ours / hands[base]
                print(f"| {sync} | {tenants} | {label} | {ours:.0f} | {hands[base]:.0f} ({base}) | {ours / hands[base]:.2f}× |")
    print()
    psql("ALTER SYSTEM SET synchronous_commit = on")
    psql("SELECT pg_reload_conf()")
    print("The writ's add by clients, synchronous_commit = on, 1,000 tenants (transactions/s):\n")
    print("| clients | writ add | hand-written add | ratio |")
    print("|---|---|---|---|")
    for c in WRITER_CLIENTS:
        ours, hand = tps("bench_1m", "writ_add", 1000, c)[0], tps("bench_1m", "hand_add", 1000, c)[0]
        print(f"| {c} | {ours:.0f} | {hand:.0f} | {ours / hand:.2f}× |")
    print()

    print("## Targets\n")
    print("| target | ratio | target | met? |")
    print("|---|---|---|---|")
    bars = []
    by_script = {}
    for (sync, _), lat in results.items():
        for script, value in lat.items():
            by_script[(sync, script)] = value
    for label, script, base, sync, target in TARGETS:
        ratio = by_script[(sync, base)] / by_script[(sync, script)]
        bars.append((label, ratio, target))
        print(f"| {label} ≥ {target}× (sync {sync}) | {ratio:.2f}× | {target}× | {'yes' if ratio >= target else 'no'} |")
    for label, script in SCALE_TARGETS:
        ratio = small[script] / big[script]
        bars.append((label, ratio, round(1 / 1.1, 3)))
        print(f"| {label}: cost ≤ 1.1× | {1 / ratio:.2f}× | ≤ 1.1× | {'yes' if 1 / ratio <= 1.1 else 'no'} |")
    for label, script, _ in MANY:
        for tenants in MANY_TENANTS:
            ratio = many[("on", tenants, script)]
            bars.append((f"{label}, {MANY_CLIENTS} clients, {tenants} tenants, sync on", ratio, 1.0))
            print(f"| {label} ≥ 1.0× hand-written ({MANY_CLIENTS} clients, {tenants} tenants, sync on) | {ratio:.2f}× | 1.0× | "
                  f"{'yes' if ratio >= 1.0 else 'no'} |")
    for label, tenants, target in [("2 clients vs 1, distinct tenants", 1000, 1.8), ("2 clients vs 1, one tenant", 1, 1.5)]:
        bars.append((label, scaling[tenants], target))
        print(f"| {label} ≥ {target}× | {scaling[tenants]:.2f}× | {target}× | {'yes' if scaling[tenants] >= target else 'no'} |")
    chart(bars, "bench/results.svg")
    print("\n![every ratio against its target](results.svg)")


if __name__ == "__main__":
    main()
